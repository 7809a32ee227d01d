/**
 * 0029: who decided each key of a device's desired state.
 *
 * `devices.desired_cause` holds, per key of `desired_state`, the cause of its value and when it was
 * decided: `{"locked": {"cause": "collections", "at": "…"}}`. The causes: `operator` (a person or an API
 * key: single, batch or device action ALL), `collections` (an automated `C` command) and `reconcile` (a
 * value no one commanded, restored by the server). It survives a re-registration as the desired state
 * does, so a lock collections imposed stays theirs after the phone is formatted and locked again by the
 * reconcile; `commands.cause` records the cause of each state command (the reconcile's: the cause of the
 * value it restores).
 *
 * The existing devices take the cause of the latest command still standing on each key, leaving out the
 * reconcile's (the system's, with no user or key: it restored a value, it did not decide it), so a device
 * collections locked and the reconcile re-locked before this release is collections' own again. Commands
 * recorded before carry no cause; readers take it from their interface.
 */
import { type Kysely, sql } from 'kysely';

const STATEMENTS = [
  `ALTER TABLE devices ADD COLUMN desired_cause jsonb NOT NULL DEFAULT '{}'::jsonb`,
  `ALTER TABLE commands ADD COLUMN cause text`,
  `UPDATE devices d SET desired_cause = s.causes
   FROM (
     SELECT imei1, jsonb_object_agg(state_key, jsonb_build_object('cause', cause, 'at', created_at)) AS causes
     FROM (
       SELECT DISTINCT ON (c.imei1, c.state_key) c.imei1, c.state_key, c.created_at,
         CASE WHEN c.interface = 'C' THEN 'collections' ELSE 'operator' END AS cause
       FROM commands c
       WHERE c.state_key IS NOT NULL AND c.status IN ('QUEUED', 'SENT', 'DELIVERED', 'EXECUTED')
         AND NOT (c.interface = 'S' AND c.user_id IS NULL AND c.key_id IS NULL AND c.user_label = 'system')
       ORDER BY c.imei1, c.state_key, c.id DESC
     ) latest
     GROUP BY imei1
   ) s
   WHERE d.imei1 = s.imei1`,
];

export async function up(db: Kysely<unknown>): Promise<void> {
  for (const statement of STATEMENTS) await sql.raw(statement).execute(db);
}

export async function down(): Promise<void> {
  throw new Error('Migrations are forward-only.');
}
