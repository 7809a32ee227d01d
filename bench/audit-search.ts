/**
 * The Audit Log search at scale: 5,000,000 audit rows bulk-loaded into PostgreSQL with
 * SQL generate_series (targets spread over 1,000,000 IMEIs, 50 users, a dozen actions, 400 days), every
 * row sealed into the hash chain first (as the sealer leaves a live log), then POST /api/v2/audit/search
 * through the server, one client at a time: an IMEI search (target: p99 < 50 ms), and beside it a user
 * search and an action-prefix search (the count stops at 10,000 in each).
 *
 *   node --import tsx bench/audit-search.ts        (BENCH_AUDIT_ROWS=500000 for a quick look;
 *   BENCH_AUDIT_DB=<name> reuses a database loaded by an earlier run)
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { AuditSealer } from '../apps/server/src/modules/audit/sealer';
import { cpuSnapshot, cpuSplit, describeCpu } from './lib/cpu';
import {
  ADMIN_URL,
  type BenchDatabase,
  createPostgres,
  existingPostgres,
  MQTT_URL,
  withDatabase,
} from './lib/db';
import { httpLoad } from './lib/http-load';
import { type Figure, fmt } from './lib/report';
import { Api, randomSuffix, startServerProcess } from './lib/server';

const ROWS = Number(process.env.BENCH_AUDIT_ROWS ?? 5_000_000);
const IMEIS = 1_000_000;
const USERS = 50;
const DAYS = 400;
const READ_SECONDS = Number(process.env.BENCH_READ_SECONDS ?? 5);
const TARGET_P99_MS = 50;

const imeiOf = (i: number) => `35${String(i).padStart(13, '0')}`;
const ACTIONS = [
  'command.LOCK',
  'command.UNLOCK',
  'command.NOTIFY',
  'command.BLOCKAPP',
  'device.register',
  'login',
  'logout',
  'batch.upload',
  'key.generate',
  'user.update',
  'report.export',
  'release',
];

async function loadAuditDatabase(log: (line: string) => void): Promise<BenchDatabase> {
  const reuse = process.env.BENCH_AUDIT_DB;
  if (reuse) {
    // Development: a database loaded by an earlier run (its rows already there; sealing goes on).
    const url = new URL(ADMIN_URL);
    url.pathname = `/${reuse}`;
    log(`  reusing ${reuse}`);
    const database = existingPostgres(url.toString());
    await seal(database, log);
    return database;
  }
  const database = await createPostgres('audit');
  const started = Date.now();
  try {
    await withDatabase(database, async (db) => {
      await sql`SET maintenance_work_mem = '256MB'`.execute(db);
      const indexes = await sql<{ name: string; definition: string }>`
        SELECT indexname AS name, indexdef AS definition FROM pg_indexes i
        WHERE tablename = 'audit_log' AND NOT EXISTS (
          SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname)`.execute(db);
      for (const index of indexes.rows) await sql.raw(`DROP INDEX ${index.name}`).execute(db);
      const slice = 1_000_000;
      for (let from = 1; from <= ROWS; from += slice) {
        const to = Math.min(ROWS, from + slice - 1);
        await sql`
          INSERT INTO audit_log (at, actor_user_id, actor, action, target, address, result, details)
          SELECT now() - ((${ROWS} - j) * (${DAYS} * 86400.0 / ${ROWS})) * interval '1 second',
                 j % ${USERS} + 1, 'user' || (j % ${USERS} + 1) || '@lendlock.com',
                 (${ACTIONS}::text[])[j % ${ACTIONS.length} + 1],
                 '35' || lpad(((j::bigint * 7919) % ${IMEIS} + 1)::text, 13, '0'),
                 '10.0.' || (j % 250) || '.' || (j % 200), CASE WHEN j % 97 = 0 THEN 'failure' ELSE 'success' END,
                 jsonb_build_object('transactionId', md5(j::text), 'interface', 'S')
          FROM generate_series(${from}::int, ${to}::int) AS j`.execute(db);
      }
      for (const index of indexes.rows) await sql.raw(index.definition).execute(db);
      log(`  ${fmt.int(ROWS)} audit rows loaded and indexed in ${fmt.s(Date.now() - started)}`);
    });
    await seal(database, log);
    return database;
  } catch (error) {
    await database.drop();
    throw error;
  }
}

/** Seals every row into the hash chain (as the server's sealer leaves a live log), then analyses. */
async function seal(database: BenchDatabase, log: (line: string) => void): Promise<void> {
  const sealing = Date.now();
  const opened = await database.open();
  try {
    const sealed = await new AuditSealer({ db: opened.db, log: console as never }).sealNow(true);
    log(`  ${fmt.int(sealed)} rows sealed into the hash chain in ${fmt.s(Date.now() - sealing)}`);
  } finally {
    await opened.close();
  }
  await withDatabase(database, async (db) => {
    await sql`VACUUM ANALYZE`.execute(db);
  });
}

/** Spread over the IMEIs, so that the searches are not served from a few hot pages. */
const someImei = (i: number) => imeiOf(((i * 104_729) % IMEIS) + 1);

export async function auditSearchBenchmark(log: (line: string) => void): Promise<Figure[]> {
  log(`Audit search on PostgreSQL: ${fmt.int(ROWS)} audit rows, ${READ_SECONDS} s per search, 1 client`);
  const database = await loadAuditDatabase(log);
  const server = await startServerProcess({
    DATA_DIR: database.dataDir,
    DATABASE_URL: database.url as string,
    MQTT_URL,
    MQTT_SHARED_GROUP: `bench${randomSuffix()}`,
  });
  try {
    const api = await Api.login(server.url);
    const probe = await api.post<{ total: number; totalCapped?: boolean }>('/api/v2/audit/search', {
      imei: someImei(1),
    });
    if (probe.total < 1) throw new Error(`the IMEI search found ${probe.total} rows`);
    const searches = [
      { name: 'IMEI', body: (i: number) => ({ imei: someImei(i), limit: 50 }) },
      { name: 'user', body: (i: number) => ({ user: `user${(i % USERS) + 1}@lendlock.com`, limit: 50 }) },
      { name: 'action prefix', body: (i: number) => ({ action: ACTIONS[i % ACTIONS.length], limit: 50 }) },
    ];
    const results = [];
    for (const search of searches) {
      const spec = {
        method: 'POST' as const,
        path: '/api/v2/audit/search',
        body: search.body,
        headers: { 'x-api-key': api.token },
      };
      await httpLoad(server.url, spec, { clients: 1, seconds: 1 });
      const before = cpuSnapshot(server.pid);
      const result = await httpLoad(server.url, spec, { clients: 1, seconds: READ_SECONDS });
      const cpu = cpuSplit(before, cpuSnapshot(server.pid));
      if (result.failed > 0) throw new Error(`${search.name} search: ${result.failed} failed requests`);
      log(
        `  ${search.name} search: p50 ${fmt.ms(result.p50)} p99 ${fmt.ms(result.p99)} (${fmt.int(result.perSecond)}/s)`,
      );
      log(`    CPU: ${describeCpu(cpu)}`);
      results.push({ ...search, result, cpu });
    }
    const [imei, ...others] = results;
    if (!imei) return [];
    const holds = imei.result.p99 < TARGET_P99_MS;
    return [
      {
        bench: 'Audit search',
        what: `IMEI search, ${fmt.int(ROWS)} audit rows, PostgreSQL`,
        value: `p50 ${fmt.ms(imei.result.p50)}, p99 ${fmt.ms(imei.result.p99)}`,
        beside: others
          .map((o) => `${o.name}: p50 ${fmt.ms(o.result.p50)}, p99 ${fmt.ms(o.result.p99)}`)
          .join('; '),
        target: `p99 < ${TARGET_P99_MS} ms (1 client)`,
        holds,
        disturbance: Math.max(...results.map((r) => r.cpu.other / r.cpu.wall)),
        ...(holds
          ? {}
          : {
              note: `p99 ${fmt.ms(imei.result.p99)}, ${Math.round((imei.result.p99 / TARGET_P99_MS - 1) * 100)} % over ${TARGET_P99_MS} ms.`,
            }),
      },
    ];
  } finally {
    await server.stop();
    await database.drop();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const figures = await auditSearchBenchmark(console.log);
  for (const figure of figures)
    console.log(
      `${figure.what}: ${figure.value} (target ${figure.target}: ${figure.holds ? 'holds' : 'MISSED'})`,
    );
  process.exit(0);
}
