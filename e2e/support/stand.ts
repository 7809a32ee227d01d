/**
 * The stand most console tests need: a server of their own (from the migrated template), Chromium, the
 * envelope codec to read what the browser received, and a simulated fleet registered with the server's
 * enrollment secret and online. Start it in `beforeAll`, stop it in `afterAll`.
 */
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Fleet } from '@lendlock/device-sim';
import type { Browser } from 'playwright-core';
import { inject } from 'vitest';
import { launchBrowser, serverCodec } from './browser';
import { newEnrollmentSecret, randomSeed, startFleet } from './fleet';
import { type RunningServer, startServer } from './server';

export interface ConsoleStand {
  server: RunningServer;
  browser: Browser;
  codec: NodeEnvelopeCodec;
  fleet: Fleet;
  stop(): Promise<void>;
}

export async function startConsoleStand(options: {
  /** Simulated devices, registered and online. */
  devices: number;
  /** The server's environment beyond ENROLLMENT_SECRET. */
  env?: Record<string, string>;
}): Promise<ConsoleStand> {
  const enrollmentSecret = newEnrollmentSecret();
  const [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret, ...options.env }),
    }),
    launchBrowser(),
  ]);
  const { codec } = await serverCodec(server.baseUrl);
  const fleet = await startFleet({
    baseUrl: server.baseUrl,
    enrollmentSecret,
    devices: options.devices,
    seed: randomSeed(),
  });
  return {
    server,
    browser,
    codec,
    fleet,
    async stop() {
      await fleet.stop();
      await browser.close();
      await server.stop();
    },
  };
}
