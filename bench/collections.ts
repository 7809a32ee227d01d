/**
 * Collections: the daily run over 1,000,000 loans on PostgreSQL, target < 60 s.
 *
 * One database bulk-loaded with SQL generate_series: 1,000,000 enrolled devices (offline: their commands
 * stay QUEUED, as the target allows) and 1,000,000 loans of 12 monthly instalments (12,000,000 rows), due on
 * every day of the month, 5 instalments in the past: 1 loan in 11 is behind by up to 40 days, the others
 * are paid up. The policy (Asia/Kolkata, Pre 3 days before, Due, Post every 3 days, lock after 5 days) is
 * saved, and the engine's daily run (the server's own code, in this process, chunk by chunk through the one
 * command pipeline) runs for the day from its start to DONE: the first day of a policy, so every loan past
 * the grace period is locked at once — the heaviest day. The figure is the run's wall time.
 *
 *   node --import tsx bench/collections.ts
 */
import { DEFAULT_COLLECTIONS_POLICY, lenderClock } from '@lendlock/contract';
import { type Kysely, sql } from 'kysely';
import type { DB } from '../apps/server/src/db/types';
import { CollectionsEngine } from '../apps/server/src/modules/collections/engine';
import { CommandService } from '../apps/server/src/modules/commands/service';
import { NO_EVENTS } from '../apps/server/src/modules/webhooks/events';
import { cpuSnapshot, cpuSplit, describeCpu } from './lib/cpu';
import { createPostgres, withDatabase } from './lib/db';
import { type Figure, fmt } from './lib/report';

const LOANS = Number(process.env.BENCH_COLLECTIONS_LOANS ?? 1_000_000);
const INSTALMENTS = 12;
const TARGET_S = 60;

/** Loads `loans` devices, loans and their instalments for the lender's `day`, and the policy (version 1). */
export async function loadLoans(db: Kysely<DB>, day: string, loans: number): Promise<void> {
  await sql`SET maintenance_work_mem = '256MB'`.execute(db);
  await sql`
      INSERT INTO devices (imei1, imei2, brand, model, claimstatus, retailer_phone, desired_state)
      SELECT '35' || lpad(i::text, 13, '0'), '86' || lpad(i::text, 13, '0'), 'Samsung', 'Galaxy A15',
             'ENROLLED', '9' || lpad((i % 500)::text, 9, '0'), '{}'::jsonb
      FROM generate_series(1, ${loans}) AS i`.execute(db);
  await sql`
      INSERT INTO loans (loan_ref, imei, customer_name, currency)
      SELECT 'L' || i, '35' || lpad(i::text, 13, '0'), 'Customer ' || i, 'INR'
      FROM generate_series(1, ${loans}) AS i`.execute(db);
  // Instalment k of loan i falls due on day D - 150 + (i % 30) + 30k; paid when due before the day,
  // unless the loan is one of the 1 in 11 behind (then unpaid if due in its last i % 40 days).
  await sql`
      INSERT INTO loan_instalments (loan_id, seq, due_date, amount_minor, paid_minor, paid_at)
      SELECT l.id, k + 1, d.due, 150000,
             CASE WHEN d.due < ${day}::date AND NOT (l.id % 11 = 0 AND d.due >= ${day}::date - (l.id % 40)::int)
                  THEN 150000 ELSE 0 END,
             NULL
      FROM loans l
      CROSS JOIN generate_series(0, ${INSTALMENTS - 1}) AS k
      CROSS JOIN LATERAL (SELECT ${day}::date - 150 + (l.id % 30)::int + 30 * k AS due) d`.execute(db);
  await sql`ANALYZE`.execute(db);
  await sql`INSERT INTO collection_policies (version, policy, created_by) VALUES (1, ${JSON.stringify({
    ...DEFAULT_COLLECTIONS_POLICY,
    enabled: true,
    timeZone: 'Asia/Kolkata',
    reminders: { preDaysBefore: 3, due: true, postEveryDays: 3 },
    lockAfterDaysOverdue: 5,
    quietHours: { start: '21:00', end: '09:00' },
  })}::jsonb, 'bench')`.execute(db);
}

export async function collectionsBenchmark(log: (line: string) => void): Promise<Figure[]> {
  const database = await createPostgres('collections');
  try {
    // The lender's day: today in Asia/Kolkata, at 10:00 (after the quiet hours).
    const day = lenderClock('Asia/Kolkata', new Date()).date;
    const now = new Date(`${day}T10:00:00+05:30`);
    const loadStarted = Date.now();
    await withDatabase(database, (db) => loadLoans(db, day, LOANS));
    log(
      `  ${fmt.int(LOANS)} devices, ${fmt.int(LOANS)} loans and ${fmt.int(LOANS * INSTALMENTS)} instalments loaded in ${fmt.s(Date.now() - loadStarted)}`,
    );

    const opened = await database.open();
    try {
      // The server's logger shape: quiet but for errors.
      const quiet = () => {};
      const logger = {
        level: 'warn',
        info: quiet,
        debug: quiet,
        trace: quiet,
        warn: (...args: unknown[]) => console.warn(...args),
        error: (...args: unknown[]) => console.error(...args),
        fatal: (...args: unknown[]) => console.error(...args),
        silent: quiet,
        child() {
          return this;
        },
      } as never;
      const commands = new CommandService({
        db: opened.db,
        log: logger,
        oneShotTtlMs: 72 * 3_600_000,
        resendAfterMs: 30_000,
      });
      const engine = new CollectionsEngine({
        db: opened.db,
        commands,
        log: logger,
        events: NO_EVENTS,
        oneShotTtlMs: 72 * 3_600_000,
        now: () => now,
      });
      const before = cpuSnapshot(null);
      const started = performance.now();
      const outcome = await engine.runDaily();
      const ms = performance.now() - started;
      const split = cpuSplit(before, cpuSnapshot(null));
      const counts = outcome.counts;
      const issued = await sql<{ n: number }>`SELECT count(*)::int AS n FROM commands`.execute(opened.db);
      log(
        `  daily run (${outcome.state}, ${outcome.chunks} chunks): ${fmt.s(ms)}; PRE ${fmt.int(counts.PRE)}, DUE ${fmt.int(counts.DUE)}, POST ${fmt.int(counts.POST)}, LOCK ${fmt.int(counts.LOCK)}; ${fmt.int(Number(issued.rows[0]?.n))} commands QUEUED`,
      );
      log(`  ${describeCpu(split)}`);
      const holds = outcome.state === 'DONE' && ms / 1000 < TARGET_S;
      return [
        {
          bench: '19 Collections daily run',
          what: `${fmt.int(LOANS)} loans (${fmt.int(LOANS * INSTALMENTS)} instalments), PostgreSQL, devices offline`,
          value: fmt.s(ms),
          beside: `${fmt.int(Number(issued.rows[0]?.n))} commands (${fmt.int((LOANS * 1000) / ms)} loans/s)`,
          target: `< ${TARGET_S} s`,
          holds,
          disturbance: split.other / split.wall,
        },
      ];
    } finally {
      await opened.close();
    }
  } finally {
    await database.drop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  collectionsBenchmark((line) => console.log(line)).then(
    (figures) => {
      console.log(
        figures
          .map((f) => `${f.bench}: ${f.value} (target ${f.target}) ${f.holds ? 'holds' : 'MISSED'}`)
          .join('\n'),
      );
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
