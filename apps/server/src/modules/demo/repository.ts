/**
 * The demo's own queries (demo.ts): who may act in its history, and the spreading of that history's dates
 * over the past weeks.
 */
import { type Kysely, sql } from 'kysely';
import type { DB } from '../../db/types';
import { DEENROLLED_RESULT } from '../devices/repository';

/** Every user, as the demo's history picks its actors among them. */
export async function demoActors(db: Kysely<DB>) {
  return db.selectFrom('users').select(['id', 'email', 'userlevel', 'retailer_phone']).execute();
}

/**
 * Spreads the history over the past weeks, in the order things happen on each device and in agreement
 * with its de-enrollments, registrations and releases: its first registration, then its commands in the
 * order they were issued (a superseded one settled when the next on its key was issued); a Formatted
 * Device command is its de-enrollment, at the same moment, and settles the commands it cancelled then; a
 * release is recorded when its Release command is executed. A device de-enrolled then registered again
 * gets its re-registration (both records) after the de-enrollment, and the commands issued after it (the
 * reconcile's) after that; one still de-enrolled was last seen when it was de-enrolled. Each device gets
 * a timeline (`registered` → `ends`, the de-enrollment or about the release); its rows are placed on it.
 */
export async function spreadDemoHistory(
  db: Kysely<DB>,
  /** How far back the history goes, and the step between a loan's instalments (modules/loans/demo.ts). */
  span: { historyDays: number; loanStepDays: number },
): Promise<void> {
  const { historyDays, loanStepDays } = span;
  // One transaction: the timeline is a temporary table of its connection, dropped at its end.
  await db.transaction().execute(async (trx) => {
    // A device registered in the past weeks, or when its loan began (a step before its first instalment
    // fell due). A de-enrolled or released device's story ends at 70 % of the way from its registration
    // to now.
    await sql`CREATE TEMP TABLE demo_timeline ON COMMIT DROP AS
    SELECT imei1, registered,
      CASE WHEN ended THEN registered + (now() - registered) * 0.7 ELSE now() - interval '10 minutes' END AS ends
    FROM (
      SELECT d.imei1,
        coalesce(
          (SELECT ((min(i.due_date) - ${loanStepDays}::int) + time '09:00')::timestamptz
            FROM loans l JOIN loan_instalments i ON i.loan_id = l.id WHERE l.imei = d.imei1),
          now() - (${historyDays} * interval '1 day') * (0.15 + 0.85 * random())) AS registered,
        EXISTS (SELECT 1 FROM deenrollments e WHERE e.imei1 = d.imei1)
          OR EXISTS (SELECT 1 FROM releases r WHERE r.imei1 = d.imei1) AS ended
      FROM devices d
    ) t`.execute(trx);
    // The first registration opens the timeline; a re-registration comes after its end, before now.
    await sql`UPDATE registrations g SET created_at = CASE WHEN o.rn = 1 THEN t.registered
        ELSE t.ends + (now() - t.ends) * (o.rn - 1)::float / o.n END
      FROM (SELECT id, imei1, row_number() OVER (PARTITION BY imei1 ORDER BY id) AS rn,
              count(*) OVER (PARTITION BY imei1) AS n FROM registrations) o
      JOIN demo_timeline t ON t.imei1 = o.imei1
      WHERE g.id = o.id`.execute(trx);
    await sql`UPDATE devices d SET created_at = r.first, registered_at = r.last
      FROM (SELECT imei1, min(created_at) AS first, max(created_at) AS last FROM registrations GROUP BY imei1) r
      WHERE r.imei1 = d.imei1`.execute(trx);
    // Commands in issue order, on the stretch of the timeline they were issued in: before the device's
    // Formatted Device command, between its registration and its end, the Formatted Device command at
    // the end itself; after it, between the registration that followed and now. Their later times
    // follow them, but the commands the de-enrollment cancelled: settled at its moment.
    await sql`UPDATE commands c SET
        created_at = o.at,
        sent_at = CASE WHEN c.sent_at IS NULL THEN NULL ELSE o.at + interval '1 second' END,
        delivered_at = CASE WHEN c.delivered_at IS NULL THEN NULL ELSE o.at + interval '2 seconds' END,
        completed_at = CASE WHEN c.completed_at IS NULL THEN NULL
          WHEN c.command = 'FORMATTEDDEVICE' THEN o.at
          WHEN c.status = 'CANCELLED' AND c.result = ${DEENROLLED_RESULT} THEN o.ends
          ELSE o.at + interval '3 seconds' END,
        expires_at = c.expires_at + (o.at - c.created_at)
      FROM (SELECT s.id, s.ends,
              CASE WHEN s.formatted THEN s.ends
                ELSE s.starts + (s.ends - s.starts)
                  * (row_number() OVER (PARTITION BY s.imei1, s.stretch, s.formatted ORDER BY s.id))::float
                  / (count(*) OVER (PARTITION BY s.imei1, s.stretch, s.formatted) + 1) END AS at
            FROM (SELECT c2.id, c2.imei1, c2.command = 'FORMATTEDDEVICE' AS formatted, p.stretch,
                    CASE WHEN p.stretch = 0 THEN t.registered
                      ELSE (SELECT g.created_at FROM registrations g WHERE g.imei1 = c2.imei1
                            ORDER BY g.id OFFSET p.stretch LIMIT 1) END AS starts,
                    CASE WHEN p.stretch = 0 THEN t.ends ELSE now() - interval '10 minutes' END AS ends
                  FROM commands c2
                  JOIN demo_timeline t ON t.imei1 = c2.imei1
                  CROSS JOIN LATERAL (SELECT count(*)::int AS stretch FROM commands f
                    WHERE f.imei1 = c2.imei1 AND f.command = 'FORMATTEDDEVICE' AND f.id < c2.id) p) s) o
      WHERE c.id = o.id`.execute(trx);
    // A superseded command was settled when the next command on its key was issued.
    await sql`UPDATE commands c SET completed_at = (SELECT n.created_at FROM commands n
        WHERE n.imei1 = c.imei1 AND n.state_key = c.state_key AND n.id > c.id ORDER BY n.id LIMIT 1)
      WHERE c.status = 'SUPERSEDED'`.execute(trx);
    await sql`UPDATE devices d SET last_command_at = m.last
      FROM (SELECT imei1, max(created_at) AS last FROM commands GROUP BY imei1) m
      WHERE m.imei1 = d.imei1 AND d.last_command_at IS NOT NULL`.execute(trx);
    // Who decided each key of the desired state decided it when its latest standing command was issued:
    // an operator's unlock of the demo's history is weeks old, not of today (collections reads the day).
    await sql`UPDATE devices d SET desired_cause = s.causes
      FROM (SELECT d2.imei1, jsonb_object_agg(e.key, CASE WHEN c.at IS NULL THEN e.value
                ELSE jsonb_set(e.value, '{at}', to_jsonb(c.at)) END) AS causes
            FROM devices d2
            CROSS JOIN LATERAL jsonb_each(d2.desired_cause) e
            LEFT JOIN LATERAL (SELECT max(c2.created_at) AS at FROM commands c2
              WHERE c2.imei1 = d2.imei1 AND c2.state_key = e.key
                AND c2.status IN ('QUEUED', 'SENT', 'DELIVERED', 'EXECUTED')) c ON true
            GROUP BY d2.imei1) s
      WHERE s.imei1 = d.imei1`.execute(trx);
    // The de-enrollment ends the timeline (its Formatted Device command is there); its re-registration
    // record is the registration that followed. A release is recorded when its Release command executed.
    await sql`UPDATE deenrollments e SET created_at = CASE WHEN e.action = 'DEENROLLED' THEN t.ends
        ELSE (SELECT g.created_at FROM registrations g WHERE g.imei1 = e.imei1 ORDER BY g.id OFFSET 1 LIMIT 1) END
      FROM demo_timeline t WHERE t.imei1 = e.imei1`.execute(trx);
    await sql`UPDATE releases r SET created_at = c.completed_at
      FROM commands c WHERE c.transaction_id = r.transaction_id AND c.completed_at IS NOT NULL`.execute(trx);
    // A formatted phone was last seen, and went offline, when it was de-enrolled.
    await sql`UPDATE devices d SET offline_since = t.ends,
        last_seen_at = CASE WHEN d.last_seen_at IS NULL THEN NULL ELSE t.ends END
      FROM demo_timeline t WHERE t.imei1 = d.imei1 AND d.claimstatus = 'DEENROLLED'`.execute(trx);
  });
}
