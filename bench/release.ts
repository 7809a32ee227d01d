/**
 * A release under load (priority that is real): while two 100,000-row batches run on PostgreSQL and 50
 * clients read, an operator's release reaches its online device, is executed there and acknowledged,
 * in p50 < 250 ms and p99 < 750 ms over at least 20 releases; beside it, the throughput of the two
 * batches measured over the same seconds (priority must not cost the batches their speed).
 *
 * Each release goes to a device of its own (a released device accepts no further command), registered
 * over HTTPS and online over MQTT as an agent is; releases leave on a fixed schedule (RELEASE_EVERY_MS),
 * whether the previous one has finished or not, so a slow one does not thin out the sample. A release's
 * time runs from the moment the request leaves this process until this process sees its row EXECUTED,
 * polling the database directly (not through the loaded server). The batches' devices are seeded in the
 * database; with BENCH_RELEASE_FLEET=online they are also online (a multiplexed fleet on the embedded
 * broker's load-test identity), so the batches' commands and acknowledgements share the broker, the
 * server's publish queue and its device inbox with the releases.
 */
import { randomBytes } from 'node:crypto';
import { loadavg } from 'node:os';
import { imeiFor, MultiplexedFleet, SimulatedDevice } from '@lendlock/device-sim';
import { freePort, waitUntil } from '@lendlock/testkit';
import pg from 'pg';
import { cpuSnapshot, cpuSplit, describeCpu } from './lib/cpu';
import { createPostgres, seedDevices, withDatabase } from './lib/db';
import { httpLoad } from './lib/http-load';
import { type Figure, fmt, percentile } from './lib/report';
import { Api, ENROLLMENT_SECRET, sleep, startServerProcess } from './lib/server';

type Log = (line: string) => void;

const ROWS = Number(process.env.BENCH_BATCH_ROWS ?? 100_000);
/** Releases measured (the target needs at least 20). */
const RELEASES = Number(process.env.BENCH_RELEASES ?? 24);
/** A release leaves this often, whether the previous one has finished or not. */
const RELEASE_EVERY_MS = 400;
/** The batches and the reads run this long before the first release. */
const WARM_UP_MS = 4000;
/** A release not executed after this counts as this long (and the run says so). */
const RELEASE_TIMEOUT_MS = 30_000;
const P50_TARGET_MS = 250;
const P99_TARGET_MS = 750;

interface ReleaseTiming {
  imei: string;
  transactionId: string;
  /** Milliseconds from the request leaving this process. */
  answered: number;
  atDevice: number;
  executed: number;
  /** The command's own timestamps, database clock, from its creation (recorded / sent / acknowledged). */
  phases?: { created: number; sent: number; delivered: number; completed: number };
}

/** The devices that will be released: registered over HTTPS with their device key, online over MQTT. */
async function connectReleaseDevices(url: string, count: number): Promise<SimulatedDevice[]> {
  const devices: SimulatedDevice[] = [];
  for (let i = 0; i < count; i++) {
    const device = new SimulatedDevice(
      {
        imei1: imeiFor(903, i + 1),
        imei2: null,
        manufacturer: 'Samsung Electronics',
        brand: 'Samsung',
        model: 'Galaxy A15',
        appversion: '3.2.1',
        apptype: 'DEVICE_OWNER',
        retailer_phone: null,
      },
      { server: url, enrollmentSecret: ENROLLMENT_SECRET },
    );
    await device.register();
    await device.connect();
    devices.push(device);
  }
  return devices;
}

/** Sends one release and follows it to EXECUTED, reading the database directly. */
async function releaseOne(api: Api, watcher: pg.Pool, device: SimulatedDevice): Promise<ReleaseTiming> {
  const startedWall = Date.now();
  const started = performance.now();
  const arrived = new Promise<number>((resolve) => {
    const listener = (command: { id: string; command: string }) => {
      if (command.command !== 'RELEASE') return;
      device.off('command', listener);
      resolve(performance.now() - started);
    };
    device.on('command', listener);
  });
  const sent = await api.post<{ transactionId: string }>('/api/locknotification.php', {
    imei: device.imei,
    action: 'release',
  });
  const answered = performance.now() - started;
  let executed = Number.NaN;
  for (;;) {
    const { rows } = await watcher.query<{ status: string }>(
      'SELECT status FROM commands WHERE transaction_id = $1',
      [sent.transactionId],
    );
    if (rows[0]?.status === 'EXECUTED') {
      executed = performance.now() - started;
      break;
    }
    if (performance.now() - started > RELEASE_TIMEOUT_MS) break;
    await sleep(5);
  }
  const atDevice = await Promise.race([arrived, sleep(10).then(() => Number.NaN)]);
  const { rows } = await watcher.query<{
    created: number;
    sent: number;
    delivered: number;
    completed: number;
  }>(
    `SELECT extract(epoch FROM created_at) * 1000 - $2::float8 AS created,
            extract(epoch FROM sent_at) * 1000 - $2::float8 AS sent,
            extract(epoch FROM delivered_at) * 1000 - $2::float8 AS delivered,
            extract(epoch FROM completed_at) * 1000 - $2::float8 AS completed
     FROM commands WHERE transaction_id = $1`,
    [sent.transactionId, startedWall],
  );
  const phase = rows[0];
  return {
    imei: device.imei,
    transactionId: sent.transactionId,
    answered,
    atDevice,
    executed: Number.isNaN(executed) ? RELEASE_TIMEOUT_MS : executed,
    ...(phase
      ? {
          phases: {
            created: Number(phase.created),
            sent: Number(phase.sent),
            delivered: Number(phase.delivered),
            completed: Number(phase.completed),
          },
        }
      : {}),
  };
}

async function batchProgress(watcher: pg.Pool): Promise<{ processed: number; total: number; at: number }> {
  const { rows } = await watcher.query<{ processed: string; total: string }>(
    'SELECT coalesce(sum(processed), 0) AS processed, coalesce(sum(valid), 0) AS total FROM batches',
  );
  return {
    processed: Number(rows[0]?.processed ?? 0),
    total: Number(rows[0]?.total ?? 0),
    at: performance.now(),
  };
}

const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

export async function releaseUnderLoadBenchmark(log: Log): Promise<Figure[]> {
  const online = process.env.BENCH_RELEASE_FLEET === 'online';
  const database = await createPostgres('release');
  const lockImeis = Array.from({ length: ROWS }, (_, i) => imeiFor(901, i));
  const blockImeis = Array.from({ length: ROWS }, (_, i) => imeiFor(902, i));
  await withDatabase(database, (db) => seedDevices(db, [...lockImeis, ...blockImeis]));
  const loadTestPassword = `bench-${randomBytes(9).toString('hex')}`;
  const mqttPort = online ? await freePort() : 0;
  const server = await startServerProcess({
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url ?? '',
    MQTT_PORT: String(mqttPort),
    BATCH_WORKERS: '2',
    ...(online ? { MQTT_LOADTEST_PASSWORD: loadTestPassword } : {}),
  });
  const watcher = new pg.Pool({ connectionString: database.url ?? '', max: 2 });
  let fleet: MultiplexedFleet | null = null;
  const devices: SimulatedDevice[] = [];
  try {
    const api = await Api.login(server.url);
    devices.push(...(await connectReleaseDevices(server.url, RELEASES)));
    if (online) {
      fleet = new MultiplexedFleet({
        url: `mqtt://127.0.0.1:${mqttPort}`,
        username: 'lendlock-loadtest',
        password: loadTestPassword,
        imeis: [...lockImeis, ...blockImeis],
        connections: 4,
        subscription: 'per-device',
        publishState: false,
      });
      await fleet.start();
      await fleet.announce(true);
      await waitUntil(
        'the batch devices online',
        async () => {
          const { rows } = await watcher.query<{ n: string }>(
            'SELECT count(*) AS n FROM devices WHERE online',
          );
          return Number(rows[0]?.n ?? 0) >= 2 * ROWS + RELEASES;
        },
        300_000,
        250,
      );
    }
    const csv = (imeis: string[]) => `Sno,IMEI1\n${imeis.map((imei, i) => `${i + 1},${imei}`).join('\n')}\n`;
    await api.upload('bulkLockCopy.php', 'lock.csv', csv(lockImeis));
    await api.upload('bulkBlockCopy.php', 'block.csv', csv(blockImeis));
    log(
      `release: two ${fmt.int(ROWS)}-row batches running (their devices ${online ? 'online' : 'offline'}); 50 clients reading`,
    );
    const headers = { 'x-api-key': api.token };
    let reading = true;
    const seconds = (WARM_UP_MS + RELEASES * RELEASE_EVERY_MS) / 1000 + 2;
    const load = Promise.all([
      httpLoad(server.url, { method: 'GET', path: '/api/homeData.php', headers }, { clients: 15, seconds }),
      httpLoad(
        server.url,
        {
          method: 'POST',
          path: '/api/devicedetails.php',
          headers,
          body: (i) => ({ imei: lockImeis[i % ROWS] }),
        },
        { clients: 20, seconds },
      ),
      httpLoad(
        server.url,
        {
          method: 'POST',
          path: '/api/auditReportByImei.php',
          headers,
          body: (i) => ({ imei1: blockImeis[i % ROWS] }),
        },
        { clients: 15, seconds },
      ),
    ]).finally(() => {
      reading = false;
    });
    await sleep(WARM_UP_MS);
    // The machine's load as the releases start (1-minute average: the benchmark's own load included).
    const machineLoad = loadavg()[0] ?? Number.NaN;
    const cpuBefore = cpuSnapshot(server.pid);
    const before = await batchProgress(watcher);
    const releases: Promise<ReleaseTiming>[] = [];
    for (const [i, device] of devices.entries()) {
      releases.push(releaseOne(api, watcher, device));
      if (i < devices.length - 1) await sleep(RELEASE_EVERY_MS);
    }
    const timings = await Promise.all(releases);
    const after = await batchProgress(watcher);
    const cpu = cpuSplit(cpuBefore, cpuSnapshot(server.pid));
    const stillReading = reading;
    const results = await load;
    const requests = results.reduce((sum, r) => sum + r.requests, 0);
    const perSecond = results.reduce((sum, r) => sum + r.perSecond, 0);
    const batchRate = (after.processed - before.processed) / ((after.at - before.at) / 1000);
    const batchesRan = after.processed < after.total;

    const executed = timings.map((t) => t.executed).sort((a, b) => a - b);
    const p50 = percentile(executed, 50);
    const p99 = percentile(executed, 99);
    const released = devices.filter((d) => d.state.released).length;
    const timedOut = timings.filter((t) => t.executed >= RELEASE_TIMEOUT_MS).length;
    log(
      `release: ${timings.length} releases, executed p50 ${fmt.ms(p50)}, p99 ${fmt.ms(p99)}, max ${fmt.ms(executed[executed.length - 1] ?? Number.NaN)} (targets < ${P50_TARGET_MS} ms, < ${P99_TARGET_MS} ms); ${released} devices released${timedOut ? `, ${timedOut} not executed within ${fmt.s(RELEASE_TIMEOUT_MS)}` : ''}`,
    );
    log(
      `  batches in the same seconds: ${fmt.int(batchRate)} rows/s (${fmt.int(after.processed - before.processed)} rows; ${fmt.int(after.processed)} of ${fmt.int(after.total)} done at the last release${batchesRan ? '' : ': the batches ENDED during the releases'}); reads: ${fmt.int(perSecond)} req/s, ${fmt.int(requests)} requests${stillReading ? '' : ' (the reads ENDED before the last release)'}`,
    );
    const phased = timings.filter((t) => t.phases);
    if (phased.length > 0)
      log(
        `  medians from the request: answered ${fmt.ms(median(timings.map((t) => t.answered)))}, recorded ${fmt.ms(median(phased.map((t) => t.phases?.created ?? Number.NaN)))}, sent ${fmt.ms(median(phased.map((t) => t.phases?.sent ?? Number.NaN)))}, at the device ${fmt.ms(median(timings.map((t) => t.atDevice)))}, acknowledged ${fmt.ms(median(phased.map((t) => t.phases?.completed ?? Number.NaN)))} (database clock), seen EXECUTED ${fmt.ms(p50)}`,
      );
    log(
      `  CPU during the releases: ${describeCpu(cpu)}; load average ${machineLoad.toFixed(2)} as they started`,
    );
    const other = cpu.other / cpu.wall;
    return [
      {
        bench: '9 Release under load',
        what: `${timings.length} releases, each to its own online device, one every ${RELEASE_EVERY_MS} ms, while two ${fmt.int(ROWS)}-row batches run (devices ${online ? 'online' : 'offline'}) and 50 clients read (${fmt.int(perSecond)} req/s), PostgreSQL; machine load ${machineLoad.toFixed(2)} (1-minute average as the releases started)`,
        value: `p50 ${fmt.ms(p50)}, p99 ${fmt.ms(p99)}`,
        beside: `batches ${fmt.int(batchRate)} rows/s in the same seconds`,
        target: `p50 < ${P50_TARGET_MS} ms, p99 < ${P99_TARGET_MS} ms`,
        holds:
          p50 < P50_TARGET_MS &&
          p99 < P99_TARGET_MS &&
          released === timings.length &&
          timings.length >= 20 &&
          batchesRan,
        disturbance: other,
      },
    ];
  } finally {
    for (const device of devices) await device.disconnect().catch(() => {});
    await fleet?.stop().catch(() => {});
    await watcher.end().catch(() => {});
    await server.stop();
    await database.drop();
  }
}

if (process.argv[1]?.endsWith('release.ts')) {
  releaseUnderLoadBenchmark((line) => console.log(line)).then(
    (figures) => {
      for (const figure of figures)
        console.log(
          `${figure.bench}: ${figure.value} (target ${figure.target}) ${figure.holds ? 'holds' : 'MISSED'}; ${figure.beside}`,
        );
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
