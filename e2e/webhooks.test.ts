/**
 * Webhooks in the browser against the real server: an ADMIN adds an endpoint (the signing secret shown
 * once), a device registers and a real receiver gets the signed device.registered event, the deliveries
 * table shows it delivered with its HTTP status; a receiver in trouble shows the failed attempts, and
 * Replay sends the delivery again under the same webhook-id.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import type { Fleet } from '@lendlock/device-sim';
import { waitUntil } from '@lendlock/testkit';
import type { Browser } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { WEBHOOK_LABELS } from '../apps/web/src/pages/Webhooks/labels';
import { consolePagePerTest, launchBrowser, screenTitle, serverCodec, signIn } from './support/browser';

import { newEnrollmentSecret, randomSeed, startFleet } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

interface Received {
  id: string;
  type: string;
  data: Record<string, unknown>;
}

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
let receiver: Server;
let receiverUrl = '';
let secret = '';
let answer = 204;
const received: Received[] = [];
const fleets: Fleet[] = [];
const enrollmentSecret = newEnrollmentSecret();

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk) => (body += chunk));
    req.on('end', () => {
      try {
        const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as Received;
        if (answer < 300)
          received.push({ id: String(req.headers['webhook-id']), type: event.type, data: event.data });
        res.writeHead(answer).end();
      } catch {
        res.writeHead(400).end();
      }
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/lendlock-events`;
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({
        ENROLLMENT_SECRET: enrollmentSecret,
        WEBHOOK_ALLOW_PRIVATE: 'on',
        WEBHOOK_RETRY_FIRST: '200ms',
      }),
    }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
});

afterAll(async () => {
  for (const fleet of fleets) await fleet.stop();
  await browser?.close();
  await server?.stop();
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
});

describe('Webhooks screen', () => {
  it('an ADMIN adds an endpoint, sees its secret once, and follows a signed delivery, a failure and a replay', async () => {
    const { page } = consolePage;
    await signIn(page, codec, USERS.admin);
    await page.getByTestId('nav-webhooks').click();
    await page.getByRole('heading', { name: screenTitle('webhooks'), exact: true }).waitFor();

    // A URL that is not one: the server's message, nothing added.
    await page.getByLabel(WEBHOOK_LABELS.url).fill('not a url');
    await page.getByLabel('device.registered').check();
    await page.getByRole('button', { name: WEBHOOK_LABELS.addEndpoint }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toBe(
      'The URL must start with https:// and name a host.',
    );

    await page.getByLabel(WEBHOOK_LABELS.url).fill(receiverUrl);
    await page.getByLabel(WEBHOOK_LABELS.description).fill('loan system');
    await page.getByRole('button', { name: WEBHOOK_LABELS.addEndpoint }).click();
    secret = (await page.getByTestId('webhook-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_/);
    const endpoints = page.getByRole('table', { name: WEBHOOK_LABELS.endpoints });
    await endpoints.getByRole('cell', { name: receiverUrl }).waitFor();
    await expect(endpoints.getByRole('cell', { name: 'device.registered' }).count()).resolves.toBe(1);

    // A device registers: the receiver verifies the signature of its event.
    const fleet = await startFleet({
      baseUrl: server.baseUrl,
      enrollmentSecret,
      devices: 1,
      seed: randomSeed(),
    });
    fleets.push(fleet);
    const imei1 = fleet.devices[0]?.imei ?? '';
    await waitUntil(
      'device.registered delivered',
      () => received.some((r) => r.data.imei1 === imei1),
      20_000,
    );
    const delivered = received.find((r) => r.data.imei1 === imei1);
    expect(delivered?.type).toBe('device.registered');

    await endpoints.getByRole('button', { name: WEBHOOK_LABELS.deliveries }).click();
    const deliveries = page.getByRole('table', { name: WEBHOOK_LABELS.deliveries });
    const deliveredRow = deliveries.getByRole('row').filter({ hasText: delivered?.id ?? '?' });
    await deliveredRow.getByText('DELIVERED').waitFor();
    await expect(deliveredRow.getByRole('cell', { name: '204', exact: true }).count()).resolves.toBe(1);

    // The receiver is in trouble: the next event fails and is retried; the table says so.
    answer = 500;
    const second = await startFleet({
      baseUrl: server.baseUrl,
      enrollmentSecret,
      devices: 1,
      seed: randomSeed(),
    });
    fleets.push(second);
    const failedRow = deliveries.getByRole('row').filter({ hasText: '500' }).first();
    await failedRow.waitFor({ timeout: 20_000 });
    await expect(failedRow.getByText('PENDING').count()).resolves.toBe(1);
    const messageId = (await failedRow.getByRole('code').textContent()) ?? '';
    expect(messageId).toMatch(/^msg_/);

    // Fixed; the operator replays it: it arrives under the same id.
    answer = 200;
    page.once('dialog', (dialog) => void dialog.accept());
    await failedRow.getByRole('button', { name: WEBHOOK_LABELS.replayOf(messageId) }).click();
    await waitUntil('the replayed delivery', () => received.some((r) => r.id === messageId), 20_000);
    await deliveries.getByRole('row').filter({ hasText: messageId }).getByText('DELIVERED').waitFor();
  });

  it('a USER has no Webhooks entry and the calls are refused', async () => {
    const { page } = consolePage;
    const session = await signIn(page, codec, USERS.locker);
    await expect(page.getByTestId('nav-webhooks').count()).resolves.toBe(0);
    const response = await fetch(`${server.baseUrl}/api/v2/webhooks`, {
      headers: { 'X-API-Key': session.token },
    });
    expect(response.status).toBe(403);
  });
});
