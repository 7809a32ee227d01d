/**
 * The release approval queue answers truly: with more releases awaiting approval than
 * a list shows (500), approving the oldest answers 200 with the release as the database now holds it, and
 * the API's release states are the database's, read by one mapping: an automatic release is not shown
 * as approved, a release the pipeline refused is not shown as still awaiting approval.
 */
import { COLLECTIONS_MESSAGES, type Session } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { registerProfile, TEST_ENROLLMENT_SECRET } from './devices';
import { buildTestApp, buildUser, loginAs } from './factories';

const WAITING = 501;

describe.each(databaseKinds())('release approvals on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let admin: Session;
  let imei: string;

  const call = (method: 'GET' | 'POST', url: string, payload?: object) =>
    app.inject({
      method,
      url: `/api/v2/collections/${url}`,
      headers: { 'x-api-key': admin.token },
      ...(payload ? { payload } : {}),
    });

  /** A paid loan per IMEI and its RELEASE action in `state`; returns the actions' ids in order. */
  const releases = async (imeis: string[], state: string, decidedBy: string | null = null) => {
    const { rows } = await sql<{ id: number }>`
      WITH l AS (
        INSERT INTO loans (loan_ref, imei, customer_name, currency, status)
        SELECT 'R-' || md5(random()::text || i::text), imeis[i], 'Customer ' || i, 'INR', 'PAID'
        FROM (SELECT ${imeis}::text[] AS imeis) s, generate_series(1, cardinality(${imeis}::text[])) i
        RETURNING id, imei)
      INSERT INTO collection_actions (loan_id, imei1, kind, action_date, version, rule, state, decided_by)
      SELECT id, imei, 'RELEASE', '2026-03-01', 1, 'collections v1: release when the last instalment is paid',
        ${state}, ${decidedBy}
      FROM l ORDER BY id
      RETURNING id`.execute(database.db);
    return rows.map((r) => Number(r.id)).sort((a, b) => a - b);
  };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, {
      enrollmentSecret: TEST_ENROLLMENT_SECRET,
      collectionsWorkers: false,
    });
    admin = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    imei = (await registerProfile(app)).profile.imei1;
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it('approves the oldest of 501 releases awaiting approval: 200, APPROVED, and the RELEASE is issued', async () => {
    const [oldest] = await releases([imei], 'AWAITING_APPROVAL');
    const others = Array.from({ length: WAITING - 1 }, (_, i) => `35${String(i).padStart(13, '0')}`);
    const newer = await releases(others, 'AWAITING_APPROVAL');
    const queue = (await call('GET', 'releases')).json().items as { id: number }[];
    expect(queue).toHaveLength(500);
    expect(queue.some((r) => r.id === oldest)).toBe(false);
    // The newer ones approved meanwhile (as an operator working the queue newest first would).
    await sql`UPDATE collection_actions SET state = 'ISSUED', decided_by = 'other@lendlock.com',
      decided_at = now() WHERE id = ANY(${newer}::bigint[])`.execute(database.db);

    const approved = await call('POST', `releases/${oldest}/approve`, {});
    expect(approved.statusCode, approved.body).toBe(200);
    expect(approved.json()).toMatchObject({
      message: COLLECTIONS_MESSAGES.releaseApproved,
      release: { id: oldest, imei, state: 'APPROVED', transactionId: expect.any(String) },
    });
    const row = await database.db
      .selectFrom('collection_actions')
      .select(['state', 'decided_by', 'transaction_id'])
      .where('id', '=', oldest as number)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({ state: 'ISSUED', decided_by: admin.email });
    const command = await database.db
      .selectFrom('commands')
      .select(['command', 'transaction_id'])
      .where('imei1', '=', imei)
      .executeTakeFirstOrThrow();
    expect(command).toEqual({ command: 'RELEASE', transaction_id: row.transaction_id });
  });

  it('shows each release in the state the database holds: automatic and refused ones are not approvals', async () => {
    const auto = `36${String(1).padStart(13, '0')}`;
    const refused = `36${String(2).padStart(13, '0')}`;
    const [autoId] = await releases([auto], 'ISSUED');
    const [refusedId] = await releases([refused], 'REFUSED', admin.email);
    const approved = (await call('GET', 'releases?state=APPROVED')).json().items as { id: number }[];
    expect(approved.map((r) => r.id)).not.toContain(autoId);
    expect(approved.map((r) => r.id)).not.toContain(refusedId);
    const byDevice = (await call('GET', `releases?state=AWAITING_APPROVAL&imei=${refused}`)).json().items;
    expect(byDevice).toEqual([]);
    // A refused approval is neither awaiting, approved nor rejected: it is REFUSED, and listed as such.
    const refusedList = await call('GET', 'releases?state=REFUSED');
    expect(refusedList.statusCode, refusedList.body).toBe(200);
    expect(refusedList.json().items).toMatchObject([{ id: refusedId, imei: refused, state: 'REFUSED' }]);
    const again = await call('POST', `releases/${refusedId}/approve`, {});
    expect(again.statusCode).toBe(409);
    expect(again.json().message).toBe(COLLECTIONS_MESSAGES.releaseDecided);
  });
});
