/**
 * A finished batch's results, read in pages: a 200,000-row batch (every tenth row not found, a fifth of
 * those released) written into the database, then through the server, one call at a time: the first page
 * the Batches screen and the batch panel show (`/api/v2/batch/results`, 1,000 rows; target < 300 ms), the
 * first page of its not found rows and of one reason, and beside them what the console did before (every
 * row, 20,000 at a time, before showing any) and the streamed CSV of every row. On the embedded database
 * and on PostgreSQL. The call's time is the server's answer as the browser receives it (plain JSON, no
 * envelope); the table then renders only the rows in view.
 *
 *   node --import tsx bench/batch-results.ts [embedded|postgres]
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freePort } from '@lendlock/testkit';
import { sql } from 'kysely';
import { STACK_LABEL, type Stack } from './batch';
import { cpuSnapshot, cpuSplit, describeCpu } from './lib/cpu';
import { type BenchDatabase, createPglite, createPostgres, MQTT_URL, withDatabase } from './lib/db';
import { type Figure, fmt, percentile } from './lib/report';
import { Api, randomSuffix, startServerProcess } from './lib/server';

const ROWS = Number(process.env.BENCH_RESULT_ROWS ?? 200_000);
const PAGE = 1_000;
/** What the console read per call before results were paged (RESULTS_PAGE_SIZE), all before the table. */
const OLD_PAGE = 20_000;
const RUNS = 15;
const TARGET_MS = 300;

/** A finished LOCK batch of `rows` rows of the system (no user: a SUPERADMIN may read it). */
async function seedBatch(database: BenchDatabase, rows: number): Promise<number> {
  return withDatabase(database, async (db) => {
    const notFound = Math.floor(rows / 10);
    const batch = await db
      .insertInto('batches')
      .values({
        feature: 'lockfiles',
        command: 'LOCK',
        file_name: 'bench.csv',
        user_label: 'bench',
        user_id: null,
        status: 'complete',
        total: rows,
        valid: rows,
        processed: rows,
        found: rows - notFound,
        not_found: notFound,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    const id = Number(batch.id);
    for (let first = 1; first <= rows; first += 50_000) {
      const last = Math.min(rows, first + 49_999);
      await sql`
        INSERT INTO batch_items (batch_id, seq, imei, result, note, transaction_id)
        SELECT ${id}::bigint, g, (350000000000000 + g)::text,
               CASE WHEN g % 10 = 0 THEN 'not found' ELSE 'found' END,
               CASE WHEN g % 50 = 0 THEN 'released' WHEN g % 10 = 0 THEN 'not registered' END,
               CASE WHEN g % 10 = 0 THEN NULL ELSE md5(g::text) END
        FROM generate_series(${first}::int, ${last}::int) g`.execute(db);
    }
    await sql`ANALYZE batch_items`.execute(db);
    return id;
  });
}

/** The times of `runs` calls of `call`, after one unmeasured (its plans and caches warm). */
async function timed(runs: number, call: () => Promise<unknown>): Promise<number[]> {
  await call();
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    await call();
    times.push(performance.now() - start);
  }
  return times.sort((a, b) => a - b);
}

export async function batchResultsBenchmark(stack: Stack, log: (line: string) => void): Promise<Figure[]> {
  log(`Batch results: a ${fmt.int(ROWS)}-row batch on ${STACK_LABEL[stack]}`);
  const database = stack === 'embedded' ? await createPglite('results') : await createPostgres('results');
  const batchId = await seedBatch(database, ROWS);
  const server = await startServerProcess({
    DATA_DIR: database.dataDir,
    ...(database.url
      ? { DATABASE_URL: database.url, MQTT_URL, MQTT_SHARED_GROUP: `bench${randomSuffix()}` }
      : { MQTT_PORT: String(await freePort()) }),
  });
  try {
    const api = await Api.login(server.url);
    const page = (selection: object, offset = 0, limit = PAGE) =>
      api.post<{ items: { sno: number }[]; total: number }>('/api/v2/batch/results', {
        batchId,
        offset,
        limit,
        ...selection,
      });
    const before = cpuSnapshot(server.pid);
    const first = await timed(RUNS, () => page({}));
    const notFound = await timed(RUNS, () => page({ filter: 'notFound' }));
    const reason = await timed(RUNS, () => page({ filter: 'notFound', reason: 'released' }));
    const all = await timed(3, async () => {
      for (let offset = 0; ; ) {
        const next = await page({}, offset, OLD_PAGE);
        if (next.items.length < OLD_PAGE) return;
        offset = next.items.at(-1)?.sno ?? 0;
      }
    });
    let bytes = 0;
    const file = await timed(3, async () => {
      const response = await fetch(`${server.url}/api/v2/batch/export?batchId=${batchId}`, {
        headers: { 'x-api-key': api.token },
      });
      bytes = (await response.arrayBuffer()).byteLength;
    });
    const cpu = cpuSplit(before, cpuSnapshot(server.pid));
    const p50 = (times: number[]) => percentile(times, 50);
    const p95 = (times: number[]) => percentile(times, 95);
    log(`  first page (${fmt.int(PAGE)} rows): p50 ${fmt.ms(p50(first))}, p95 ${fmt.ms(p95(first))}`);
    log(
      `  first page of the not found rows: p50 ${fmt.ms(p50(notFound))}; of one reason: ${fmt.ms(p50(reason))}`,
    );
    log(`  every row, ${fmt.int(OLD_PAGE)} at a time (the console before): ${fmt.ms(p50(all))}`);
    log(`  the streamed CSV of every row: ${fmt.ms(p50(file))} (${fmt.mb(bytes)})`);
    log(`    CPU: ${describeCpu(cpu)}`);
    const holds = p95(first) < TARGET_MS && p95(notFound) < TARGET_MS && p95(reason) < TARGET_MS;
    return [
      {
        bench: 'Batch results',
        what: `first page of a ${fmt.int(ROWS)}-row batch's results, ${STACK_LABEL[stack]}`,
        value: `p95 ${fmt.ms(p95(first))}; not found ${fmt.ms(p95(notFound))}; a reason ${fmt.ms(p95(reason))}`,
        beside: `every row read first, as before paging: ${fmt.s(p50(all))}; CSV of every row streamed: ${fmt.s(p50(file))}`,
        target: `< ${TARGET_MS} ms`,
        holds,
        disturbance: cpu.other / cpu.wall,
        ...(holds ? {} : { note: `a first page took more than ${TARGET_MS} ms at p95.` }),
      },
    ];
  } finally {
    await server.stop();
    await database.drop();
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const stack = (process.argv[2] ?? 'embedded') as Stack;
  const figures = await batchResultsBenchmark(stack, console.log);
  for (const figure of figures)
    console.log(
      `${figure.what}: ${figure.value} (target ${figure.target}: ${figure.holds ? 'holds' : 'MISSED'})`,
    );
  process.exit(0);
}
