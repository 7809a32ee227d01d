import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, simulatedDevice, startDeviceServer } from './devices';

describe('Prometheus metrics', () => {
  let database: TestDatabase;
  let server: DeviceServer;

  beforeAll(async () => {
    database = await openTestDatabase('pglite');
    server = await startDeviceServer(database, 'embedded', { metricsToken: 'metrics-token-0123456789' });
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
  });

  it('exposes command, batch, device and HTTP figures behind the metrics token', async () => {
    expect((await server.app.inject('/metrics')).statusCode).toBe(401);
    const device = simulatedDevice(server);
    await device.register();
    await device.connect();
    const issued = await server.app.ctx.commands.issue({
      imei: device.imei,
      command: 'LOCK',
      iface: 'S',
      actor: null,
    });
    await vi.waitFor(async () => {
      const row = await database.db
        .selectFrom('commands')
        .select('status')
        .where('transaction_id', '=', issued.transactionId)
        .executeTakeFirstOrThrow();
      expect(row.status).toBe('EXECUTED');
    });
    await server.app.inject('/healthz');
    const response = await server.app.inject({
      url: '/metrics',
      headers: { authorization: 'Bearer metrics-token-0123456789' },
    });
    expect(response.statusCode).toBe(200);
    const text = response.body;
    expect(text).toMatch(/lendlock_device_acks_total\{status="EXECUTED"\} [1-9]/);
    expect(text).toMatch(/lendlock_devices_online 1/);
    expect(text).toContain('lendlock_commands_pending{status="QUEUED"} 0');
    expect(text).toContain('lendlock_batches_incomplete{what="rows"} 0');
    expect(text).toMatch(/lendlock_command_ack_latency_seconds\{quantile="0.99"\} /);
    expect(text).toMatch(
      /lendlock_http_request_duration_seconds_count\{method="GET",route="\/healthz",status="200"\} 1/,
    );
    await device.disconnect();
  });
});
