/**
 * Benchmarks 3 and 4, on one PostgreSQL database bulk-loaded with SQL generate_series: 1,000,000
 * registered devices (and their registrations) and 5,000,000 commands, 1,000,000 of them SETALARM.
 * - 3, reads at scale: p50/p99 of homeData.php, devicedetails.php and auditReportByImei.php;
 * - 4, export: the 1,000,000 SETALARM rows to xlsx through GET /api/v2/reports/export (seconds, peak
 *   server RSS), beside ExcelJS's streaming writer writing the same rows with nothing else.
 *
 *   node --import tsx bench/scale.ts
 */
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { type CpuSplit, cpuSnapshot, cpuSplit, describeCpu } from './lib/cpu';
import {
  ADMIN_URL,
  type BenchDatabase,
  createPostgres,
  existingPostgres,
  MQTT_URL,
  withDatabase,
} from './lib/db';
import { httpLoad, type LoadResult } from './lib/http-load';
import { type Figure, fmt } from './lib/report';
import { Api, randomSuffix, rssOf, type ServerProcess, startServerProcess } from './lib/server';

const DEVICES = Number(process.env.BENCH_SCALE_DEVICES ?? 1_000_000);
const COMMANDS = Number(process.env.BENCH_SCALE_COMMANDS ?? 5_000_000);
/** Every fifth command is SETALARM: the export's rows. */
const EXPORT_EVERY = 5;
const DAYS = 400;
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 5);

export const imeiOf = (i: number) => `35${String(i).padStart(13, '0')}`;

const COMMAND_MIX = ['LOCK', 'UNLOCK', 'NOTIFY', 'BLOCKAPP'];

/** Creates and loads the database (a few minutes: the indexes of 5M commands dominate). */
export async function loadScaleDatabase(log: (line: string) => void): Promise<BenchDatabase> {
  const reuse = process.env.BENCH_SCALE_DB;
  if (reuse) {
    // Development: a database loaded by an earlier run and kept (BENCH_KEEP_SCALE_DB=1).
    const url = new URL(ADMIN_URL);
    url.pathname = `/${reuse}`;
    log(`  reusing ${reuse}`);
    return existingPostgres(url.toString());
  }
  const database = await createPostgres('scale');
  const started = Date.now();
  try {
    await withDatabase(database, async (db) => {
      await sql`SET maintenance_work_mem = '256MB'`.execute(db);
      await sql`
        INSERT INTO devices (imei1, imei2, manufacturer, brand, model, appversion, apptype, claimstatus,
                             match_status, created_at, registered_at, desired_state, last_command, last_command_at)
        SELECT '35' || lpad(i::text, 13, '0'), '86' || lpad(i::text, 13, '0'),
               (ARRAY['Samsung Electronics','Xiaomi','Vivo Mobile','Oppo','Realme'])[i % 5 + 1],
               (ARRAY['Samsung','Redmi','vivo','OPPO','realme'])[i % 5 + 1],
               (ARRAY['Galaxy A15','Note 13','Y17s','A18','C53'])[i % 5 + 1],
               (ARRAY['3.2.1','3.2.0','3.1.4','3.0.9'])[i % 4 + 1],
               CASE WHEN i % 5 = 0 THEN 'ADMIN' ELSE 'DEVICE_OWNER' END,
               CASE WHEN i % 20 = 0 THEN 'DEENROLLED' WHEN i % 101 = 0 THEN 'RELEASED' ELSE 'ENROLLED' END,
               CASE WHEN i % 3 = 0 THEN 'NO' ELSE 'YES' END,
               now() - ((i % ${DAYS}) * interval '1 day') - ((i * 7) % 86400) * interval '1 second',
               now() - ((i % ${DAYS}) * interval '1 day') - ((i * 7) % 86400) * interval '1 second',
               '{"locked": true}'::jsonb, 'LOCK', now() - ((i % ${DAYS}) * interval '1 day')
        FROM generate_series(1, ${DEVICES}) AS i`.execute(db);
      await sql`
        INSERT INTO registrations (imei1, imei2, match_status, registration_status, manufacturer, brand, model,
                                   appversion, apptype, created_at)
        SELECT imei1, imei2, match_status, registrationstatus, manufacturer, brand, model, appversion, apptype,
               created_at
        FROM devices`.execute(db);
      log(`  ${fmt.int(DEVICES)} devices and registrations loaded in ${fmt.s(Date.now() - started)}`);
      // A bulk load builds the commands' secondary indexes once at the end, as a restore would (the same
      // definitions, read back from the catalogue; constraint indexes stay).
      const indexes = await sql<{ name: string; definition: string }>`
        SELECT i.indexname AS name, i.indexdef AS definition FROM pg_indexes i
        WHERE i.tablename = 'commands' AND NOT EXISTS (
          SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`.execute(db);
      for (const index of indexes.rows) await sql.raw(`DROP INDEX ${index.name}`).execute(db);
      const slice = 1_000_000;
      for (let from = 1; from <= COMMANDS; from += slice) {
        const to = Math.min(COMMANDS, from + slice - 1);
        await sql`
          INSERT INTO commands (transaction_id, imei1, command, options, kind, state_key, interface, status,
                                priority, user_label, created_at, sent_at, delivered_at, completed_at)
          SELECT md5(j::text), '35' || lpad(((j::bigint * 7919) % ${DEVICES} + 1)::text, 13, '0'),
                 CASE WHEN j % ${EXPORT_EVERY} = 0 THEN 'SETALARM'
                      ELSE (${COMMAND_MIX}::text[])[j % ${COMMAND_MIX.length} + 1] END,
                 CASE WHEN j % ${EXPORT_EVERY} <> 0 AND j % 4 = 2
                      THEN '{"message": "Your EMI is due", "caseType": "Due"}'::jsonb ELSE '{}'::jsonb END,
                 CASE WHEN j % ${EXPORT_EVERY} <> 0 AND j % 4 = 2 THEN 'oneshot' ELSE 'state' END,
                 CASE WHEN j % ${EXPORT_EVERY} = 0 THEN 'alarm' WHEN j % 4 = 3 THEN 'appsBlocked'
                      WHEN j % 4 = 2 THEN NULL ELSE 'locked' END,
                 (ARRAY['S','A','B'])[j % 3 + 1],
                 CASE WHEN j % 997 = 0 THEN 'FAILED' ELSE 'EXECUTED' END,
                 0, 'ops@lendlock.com', t, t, t + interval '1 second', t + interval '2 seconds'
          FROM generate_series(${from}::int, ${to}::int) AS j,
               LATERAL (SELECT now() - ((j % ${DAYS}) * interval '1 day') - ((j * 13) % 86400) * interval '1 second' AS t) AS at`.execute(
          db,
        );
      }
      for (const index of indexes.rows) await sql.raw(index.definition).execute(db);
      log(`  ${fmt.int(COMMANDS)} commands loaded and indexed in ${fmt.s(Date.now() - started)}`);
      await sql`VACUUM ANALYZE`.execute(db);
    });
    log(`  loaded and analysed in ${fmt.s(Date.now() - started)}`);
    return database;
  } catch (error) {
    await database.drop();
    throw error;
  }
}

async function startScaleServer(database: BenchDatabase, nodeArgs: string[] = []): Promise<ServerProcess> {
  return startServerProcess(
    {
      DATA_DIR: database.dataDir,
      DATABASE_URL: database.url as string,
      MQTT_URL,
      MQTT_SHARED_GROUP: `bench${randomSuffix()}`,
    },
    nodeArgs,
  );
}

async function measure(
  server: ServerProcess,
  token: string,
  request: { method: 'GET' | 'POST'; path: string; body?: (i: number) => unknown },
  clients: number,
): Promise<LoadResult & { cpu: CpuSplit }> {
  const spec = { ...request, headers: { 'x-api-key': token } };
  await httpLoad(server.url, spec, { clients, seconds: 1 });
  const before = cpuSnapshot(server.pid);
  const result = await httpLoad(server.url, spec, { clients, seconds: READ_SECONDS });
  const cpu = cpuSplit(before, cpuSnapshot(server.pid));
  if (result.failed > 0) throw new Error(`${request.path}: ${result.failed} failed requests`);
  return { ...result, cpu };
}

/** Spread over the devices, so that the reads are not served from a few hot pages. */
const someImei = (i: number) => imeiOf(((i * 104_729) % DEVICES) + 1);

export async function readsBenchmark(
  database: BenchDatabase,
  log: (line: string) => void,
): Promise<Figure[]> {
  log(
    `3 Reads at scale on PostgreSQL: ${fmt.int(DEVICES)} devices, ${fmt.int(COMMANDS)} commands, ${READ_SECONDS} s per call`,
  );
  const server = await startScaleServer(database);
  try {
    const api = await Api.login(server.url);
    const home = await api.get<{ total_device: number }>('/api/homeData.php');
    if (home.total_device !== DEVICES) throw new Error(`homeData counted ${home.total_device} devices`);
    const calls = [
      { name: 'homeData.php', method: 'GET' as const, path: '/api/homeData.php', target: true },
      {
        name: 'devicedetails.php',
        method: 'POST' as const,
        path: '/api/devicedetails.php',
        body: (i: number) => ({ imei: someImei(i) }),
        target: true,
      },
      {
        name: 'auditReportByImei.php',
        method: 'POST' as const,
        path: '/api/auditReportByImei.php',
        body: (i: number) => ({ imei1: someImei(i) }),
        target: false,
      },
    ];
    const figures: Figure[] = [];
    for (const call of calls) {
      const one = await measure(server, api.token, call, 1);
      const ten = await measure(server, api.token, call, 10);
      log(
        `  ${call.name}: 1 client p50 ${fmt.ms(one.p50)} p99 ${fmt.ms(one.p99)} (${fmt.int(one.perSecond)}/s); 10 clients p50 ${fmt.ms(ten.p50)} p99 ${fmt.ms(ten.p99)} (${fmt.int(ten.perSecond)}/s)`,
      );
      log(`    CPU, 10 clients: ${describeCpu(ten.cpu)}`);
      figures.push({
        bench: '3 Reads at scale',
        what: `${call.name}, ${fmt.int(DEVICES)} devices / ${fmt.int(COMMANDS)} commands, PostgreSQL`,
        value: `1 client: p50 ${fmt.ms(one.p50)}, p99 ${fmt.ms(one.p99)}`,
        beside: `10 clients: p50 ${fmt.ms(ten.p50)}, p99 ${fmt.ms(ten.p99)}, ${fmt.int(ten.perSecond)} req/s`,
        // The target is the call's own latency (one client at a time). Ten clients at once on these 2
        // cores, shared with PostgreSQL and the client, mostly measure queueing: shown beside it.
        ...(call.target ? { target: 'p99 < 10 ms (1 client)', holds: one.p99 < 10 } : {}),
        disturbance: Math.max(one.cpu.other / one.cpu.wall, ten.cpu.other / ten.cpu.wall),
        ...(call.target && one.p99 >= 10
          ? {
              note: `p99 ${fmt.ms(one.p99)} with one client, ${Math.round((one.p99 / 10 - 1) * 100)} % over 10 ms.`,
            }
          : call.target && ten.p99 >= 10
            ? {
                note:
                  `with 10 clients at once the p99 is ${fmt.ms(ten.p99)} (${fmt.int(ten.perSecond)} req/s, mean ` +
                  `${fmt.ms((10 / ten.perSecond) * 1000)}): the call takes ${fmt.ms(one.p50)} (p50) alone, and ten ` +
                  'clients queue on 2 cores that also run PostgreSQL and the client.',
              }
            : {}),
      });
    }
    return figures;
  } finally {
    await server.stop();
  }
}

/** The export's date range: every day the commands were spread over. */
function exportRange(): { startdate: string; enddate: string } {
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { startdate: day(Date.now() - (DAYS + 1) * 86_400_000), enddate: day(Date.now() + 86_400_000) };
}

const here = fileURLToPath(new URL('.', import.meta.url));

/** ExcelJS alone, in its own process: rows of the same shape, with the options and pacing the export used with it. */
async function bareExcelJs(rows: number): Promise<{ ms: number; rss: number; liveHeap: number }> {
  const script = resolve(here, 'lib/exceljs-bare.ts');
  const child = spawn(process.execPath, ['--expose-gc', '--import', 'tsx', script, String(rows)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout?.on('data', (chunk) => {
    out += chunk;
  });
  await new Promise<void>((done, fail) =>
    child.once('exit', (code) => (code === 0 ? done() : fail(new Error(`exceljs-bare exited ${code}`)))),
  );
  return JSON.parse(out) as { ms: number; rss: number; liveHeap: number };
}

interface ExportRun {
  cpu: CpuSplit;
  ms: number;
  rows: number;
  bytes: number;
  idle: number;
  peak: number;
}

/** One export through the API, the server's RSS sampled every 20 ms. */
async function exportOnce(database: BenchDatabase, nodeArgs: string[] = []): Promise<ExportRun> {
  const server = await startScaleServer(database, nodeArgs);
  try {
    const api = await Api.login(server.url);
    const query = new URLSearchParams({ report: 'activatealarm', part: 'commands', ...exportRange() });
    const idle = server.rss();
    let peak = idle;
    const sampler = setInterval(() => {
      peak = Math.max(peak, rssOf(server.pid));
    }, 20);
    const before = cpuSnapshot(server.pid);
    const started = performance.now();
    try {
      const response = await fetch(`${server.url}/api/v2/reports/export?${query}`, {
        headers: { 'x-api-key': api.token },
      });
      if (!response.ok || !response.body)
        throw new Error(`export: ${response.status} ${await response.text()}`);
      const rows = Number(response.headers.get('x-total-rows'));
      let bytes = 0;
      for await (const chunk of response.body) bytes += (chunk as Uint8Array).byteLength;
      const ms = performance.now() - started;
      peak = Math.max(peak, rssOf(server.pid));
      return { cpu: cpuSplit(before, cpuSnapshot(server.pid)), ms, rows, bytes, idle, peak };
    } finally {
      clearInterval(sampler);
    }
  } finally {
    await server.stop();
  }
}

const MB = 1024 * 1024;
const HEAP_CAP = ['--max-old-space-size=192'];

export async function exportBenchmark(
  database: BenchDatabase,
  log: (line: string) => void,
): Promise<Figure[]> {
  const expected = Math.floor(COMMANDS / EXPORT_EVERY);
  log(`4 Export: ${fmt.int(expected)} executed-command rows to xlsx`);
  const run = await exportOnce(database);
  if (run.rows !== expected) throw new Error(`export counted ${run.rows} rows, expected ${expected}`);
  log(
    `  export: ${fmt.int(run.rows)} rows, ${fmt.mb(run.bytes)} xlsx in ${fmt.s(run.ms)}, peak server RSS ${fmt.mb(run.peak)} (${fmt.mb(run.idle)} before it started)`,
  );
  log(`    CPU: ${describeCpu(run.cpu)}`);
  const bare = await bareExcelJs(run.rows);
  log(
    `  ExcelJS alone: ${fmt.s(bare.ms)} (its process peaked at ${fmt.mb(bare.rss)}; ${fmt.mb(bare.liveHeap)} of live heap halfway)`,
  );
  const ratio = bare.ms / run.ms;
  const holds = run.ms < 15_000 && run.peak < 300 * MB && ratio >= 0.6;
  let note: string | undefined;
  if (!holds) {
    const misses: string[] = [];
    if (run.ms >= 15_000)
      misses.push(
        `${fmt.s(run.ms)}, ${Math.round((run.ms / 15_000 - 1) * 100)} % over 15 s. The export writes the sheet's ` +
          "XML itself (ADR 0006) and deflates it in zlib's thread pool at the fastest level, beside the thread that " +
          'reads the rows from PostgreSQL and turns them into cells, and beside PostgreSQL: see the CPU split',
      );
    if (ratio < 0.6) misses.push(`ratio ${fmt.num(ratio, 2)} (below 0.6)`);
    if (run.peak >= 300 * MB) {
      // The same export with V8's old generation capped: what the export itself holds.
      const capped = await exportOnce(database, HEAP_CAP);
      log(
        `  export with node ${HEAP_CAP.join(' ')}: ${fmt.s(capped.ms)}, peak server RSS ${fmt.mb(capped.peak)}`,
      );
      misses.push(
        `peak RSS ${fmt.mb(run.peak)}, ${Math.round((run.peak / (300 * MB) - 1) * 100)} % over 300 MB. The server ` +
          `already holds ${fmt.mb(run.idle)} when idle (Node and the server's modules). The export's ` +
          'own memory is bounded (pages of 5,000 rows, the compressor and the response by back-pressure): ' +
          `ExcelJS alone holds ${fmt.mb(bare.liveHeap)} of live heap halfway through. ` +
          'The rest is garbage that V8 lets pile up: on a machine with 24 GB it lets the old generation grow ' +
          'to several times its live size before a full collection. With the old generation capped ' +
          `(\`node ${HEAP_CAP.join(' ')}\`, as a container's memory limit would set it) the same export peaks at ` +
          `${fmt.mb(capped.peak)} and takes ${fmt.s(capped.ms)}`,
      );
    }
    note = `${misses.join('; ')}.`;
  }
  return [
    {
      bench: '4 Export',
      what: `${fmt.int(run.rows)} executed-command rows to xlsx, GET /api/v2/reports/export, PostgreSQL`,
      value: `${fmt.s(run.ms)}; peak server RSS ${fmt.mb(run.peak)}`,
      beside: `ExcelJS alone ${fmt.s(bare.ms)}; ratio ${fmt.num(ratio, 2)}`,
      target: '< 15 s; < 300 MB; ratio ≥ 0.6',
      holds,
      ...(note ? { note } : {}),
      disturbance: run.cpu.other / run.cpu.wall,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  (async () => {
    const database = await loadScaleDatabase(console.log);
    try {
      const figures = [
        ...(await readsBenchmark(database, console.log)),
        ...(await exportBenchmark(database, console.log)),
      ];
      console.table(figures);
    } finally {
      await database.drop();
    }
  })().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
