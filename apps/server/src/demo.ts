/**
 * The demo: on the embedded database, a simulated fleet runs in-process so every screen
 * has real data and every command gets a real acknowledgement. On the first start (empty database) it also
 * lays down a few weeks of history — registrations, de-enrollments, releases, commands of every kind —
 * through the same services the console uses, then spreads their dates over the past weeks.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { RAW_COMMANDS, type RawCommand } from '@lendlock/contract';
import { Fleet, rng } from '@lendlock/device-sim';
import type { FastifyInstance } from 'fastify';
import type { Principal } from './core/principal';
import { demoActors, spreadDemoHistory } from './modules/demo/repository';
import { importFinanced } from './modules/devices/repository';
import { rotateDemoSecret } from './modules/enrollment/service';
import { STEP_DAYS as LOAN_STEP_DAYS, seedDemoLoans } from './modules/loans/demo';

export interface Demo {
  fleet: Fleet;
  /** The enrollment secret the fleet registers with (ENROLLMENT_SECRET, or this start's `demo` secret). */
  enrollmentSecret: string;
  stop(): Promise<void>;
}

const HISTORY_DAYS = 21;

export function demoCredentialsFile(dataDir: string): string {
  return join(dataDir, 'demo-fleet.json');
}

export async function startDemo(
  app: FastifyInstance,
  options: { url: string; dataDir: string; devices: number; seedHistory: boolean },
): Promise<Demo | null> {
  const credentialsFile = demoCredentialsFile(options.dataDir);
  if (!options.seedHistory && !existsSync(credentialsFile)) return null;
  const { ctx } = app;
  const enrollmentSecret = ctx.config.enrollmentSecret ?? (await rotateDemoSecret(ctx.db));
  const fleet = new Fleet({
    server: options.url,
    enrollmentSecret,
    devices: options.devices,
    offlineRate: 0.1,
    failRate: 0.02,
    seed: 7,
    mqttUrl: ctx.channel.deviceMqttUrl ?? '',
    credentialsFile,
    churnSeconds: 4,
  });
  if (options.seedHistory) {
    // Most phones of the demo are financed ones: they register as Match_Status YES.
    const financed = fleet.devices.filter((_, i) => i % 7 !== 0).map((d) => d.imei);
    await importFinanced(ctx.db, financed, 'demo');
  }
  await fleet.start();
  if (options.seedHistory) {
    try {
      await seedHistory(app, fleet);
    } catch (error) {
      // The demo's history is a nicety: never let it stop the server.
      app.log.warn({ err: error }, 'demo history incomplete');
    }
  }
  app.log.info({ devices: options.devices }, 'demo fleet running');
  return { fleet, enrollmentSecret, stop: () => fleet.stop() };
}

async function seedHistory(app: FastifyInstance, fleet: Fleet): Promise<void> {
  const { db, commands } = app.ctx;
  const random = rng(11);
  const users = await demoActors(db);
  // The history's commands are issued as the lender's ADMINs and SUPERADMINs: they hold every command's
  // permission (a USER's would need its grants, which the command service checks).
  const actors: Principal[] = users
    .filter((u) => u.userlevel !== 'USER' && u.retailer_phone === null)
    .map((u) => ({
      credential: 'session',
      userId: u.id,
      email: u.email,
      userlevel: u.userlevel,
      permissions: new Set(),
      retailerPhone: null,
    }));
  const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
  const ordinary = RAW_COMMANDS.filter(
    (c) => !['RELEASE', 'FORMATTEDDEVICE', 'REBOOT', 'UPDATE'].includes(c),
  );

  const online = fleet.devices.filter((d) => d.online);
  // Commands of every kind, through the command service, acknowledged by the devices.
  for (const device of online) {
    const count = 1 + Math.floor(random() * 4);
    for (let i = 0; i < count; i++) {
      const command = pick(ordinary) as RawCommand;
      const options =
        command === 'GREYAPP'
          ? { level: pick(['level1', 'level2'] as const) }
          : command === 'NOTIFY'
            ? {
                caseType: pick(['Pre', 'Due', 'Post'] as const),
                message: 'Your EMI is due. Please pay to keep using your phone.',
              }
            : {};
      await commands.issue({
        imei: device.imei,
        command,
        options,
        iface: pick(['S', 'S', 'B', 'A'] as const),
        actor: pick(actors),
      });
    }
  }
  const superadmin = actors.find((a) => a.userlevel === 'SUPERADMIN') ?? actors[0] ?? null;
  for (const device of online.slice(0, 4)) {
    await commands.issue({
      imei: device.imei,
      command: pick(['REBOOT', 'UPDATE'] as const),
      iface: 'S',
      actor: superadmin,
    });
  }
  // A few paid-off phones released, a few formatted phones de-enrolled (half of them back again): disjoint sets.
  // At least two formatted phones: one comes back, one stays de-enrolled.
  const share = Math.max(2, Math.floor(online.length * 0.03));
  const released = online.slice(online.length - share);
  const formatted = online.slice(online.length - 2 * share, online.length - share);
  for (const device of released) {
    await commands.issue({ imei: device.imei, command: 'RELEASE', iface: 'S', actor: pick(actors) });
  }
  for (const device of formatted) {
    await device.dropOffline();
    await commands.issue({ imei: device.imei, command: 'FORMATTEDDEVICE', iface: 'S', actor: pick(actors) });
  }
  for (const device of formatted.slice(0, Math.ceil(formatted.length / 2))) {
    await device.register();
    await device.connect();
  }
  await new Promise((resolve) => setTimeout(resolve, 1500));
  await commands.drain();

  // Loans and their payments, on the embedded demo only (never on PostgreSQL): modules/loans/demo.ts.
  // Before the history is spread: a phone with a loan was registered when its loan began.
  if (app.ctx.database.kind === 'pglite' && superadmin)
    await seedDemoLoans(
      app.ctx.loans,
      db,
      fleet.devices.map((d) => d.imei),
      superadmin,
    );
  await spreadHistory(app);
}

/** Spreads the history over the past weeks (modules/demo/repository.ts `spreadDemoHistory`). */
async function spreadHistory(app: FastifyInstance): Promise<void> {
  await spreadDemoHistory(app.ctx.db, { historyDays: HISTORY_DAYS, loanStepDays: LOAN_STEP_DAYS });
}
