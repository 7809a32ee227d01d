/**
 * The audit log stays append-only and tamper-evident: triggers that fire ALWAYS,
 * a hash chain sealed in the background and verified from the first link, and a search that counts no
 * further than AUDIT_COUNT_CAP.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type AuditAnchor,
  anchorMac,
  formatAnchor,
  parseAnchor,
  verifyAnchors,
} from '../src/modules/audit/anchor';
import {
  AUDIT_COUNT_CAP,
  type AuditValues,
  appendAudit,
  appendAuditRows,
  verifyAuditChain,
} from '../src/modules/audit/repository';
import { AuditSealer } from '../src/modules/audit/sealer';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

const silent = { warn() {} } as never;

const row = (n: number, target = '356938035643809'): AuditValues => ({
  actor_user_id: null,
  actor_key_id: null,
  actor: `bulk${n % 7}@lendlock.com`,
  action: n % 2 ? 'command.LOCK' : 'command.UNLOCK',
  target,
  address: '10.0.0.1',
  result: 'success',
  details: JSON.stringify({ n, note: 'ünïcode \u2028 "quoted"' }),
});

describe.each(databaseKinds())('the audit hash chain (%s)', (kind) => {
  let database: TestDatabase;
  let sealer: AuditSealer;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    sealer = new AuditSealer({ db: database.db, log: silent });
  });
  afterAll(async () => {
    await sealer.stop();
    await database.close();
  });

  const ids = async () =>
    (await database.db.selectFrom('audit_log').select('id').orderBy('id').execute()).map((r) => Number(r.id));

  it('seals every row in id order and verifies OK; a row written later waits unsealed until sealed', async () => {
    await appendAudit(database.db, { actor: { label: 'cli' }, action: 'test.one', result: 'success' });
    await appendAuditRows(database.db, [row(1), row(2), row(3)]);
    const before = await verifyAuditChain(database.db);
    expect(before.broken).toBeNull();
    expect(before.unsealed).toBe((await ids()).length);

    expect(await sealer.sealNow()).toBe((await ids()).length);
    const links = await database.db
      .selectFrom('audit_chain')
      .select(['seq', 'audit_id'])
      .orderBy('seq')
      .execute();
    expect(links.map((l) => Number(l.audit_id))).toEqual(await ids());
    expect(links.map((l) => Number(l.seq))).toEqual(links.map((_, i) => i + 1));

    await appendAudit(database.db, { actor: null, action: 'test.later', result: 'success' });
    const later = await verifyAuditChain(database.db);
    expect(later).toMatchObject({ broken: null, sealed: links.length, unsealed: 1 });
    expect(later.firstUnsealed).toBe((await ids()).at(-1));
    expect(await sealer.sealNow()).toBe(1);
    expect(await verifyAuditChain(database.db)).toMatchObject({ broken: null, unsealed: 0 });
  });

  it('refuses UPDATE, DELETE and TRUNCATE, even with session_replication_role = replica', async () => {
    const before = await database.db.selectFrom('audit_log').selectAll().orderBy('id').execute();
    // The app's own role (row-level security's, ADR 0011) holds no UPDATE, DELETE or TRUNCATE grant.
    await expect(sql`UPDATE audit_log SET result = 'x'`.execute(database.db)).rejects.toThrow(
      /permission denied/,
    );
    // The tables' owner (the test's superuser) is refused by the append-only triggers.
    const asOwner = (statement: ReturnType<typeof sql>, replica = false) =>
      database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL ROLE NONE`.execute(trx);
        if (replica) await sql`SET LOCAL session_replication_role = replica`.execute(trx);
        await statement.execute(trx);
      });
    await expect(asOwner(sql`UPDATE audit_log SET result = 'x'`)).rejects.toThrow(/append-only/);
    await expect(asOwner(sql`DELETE FROM audit_log`)).rejects.toThrow(/append-only/);
    await expect(asOwner(sql`TRUNCATE audit_log`)).rejects.toThrow(/append-only/);
    await expect(asOwner(sql`TRUNCATE audit_chain`)).rejects.toThrow(/append-only/);
    await expect(asOwner(sql`UPDATE audit_log SET result = 'x'`, true)).rejects.toThrow(/append-only/);
    expect(await database.db.selectFrom('audit_log').selectAll().orderBy('id').execute()).toEqual(before);
  });

  it("reports the first row a superuser changed or removed behind the triggers' back", async () => {
    await appendAuditRows(database.db, [row(10), row(11), row(12), row(13)]);
    await sealer.sealNow();
    const all = await ids();
    const edited = all.at(-3) as number;
    const removed = all.at(-1) as number;
    // A superuser (the test's own role) can still disable a trigger: the chain shows what it did. The
    // app's connections run as the row-level-security role (ADR 0011): the test takes its own back.
    await database.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL ROLE NONE`.execute(trx);
      await sql`ALTER TABLE audit_log DISABLE TRIGGER audit_log_no_update`.execute(trx);
      await sql`UPDATE audit_log SET result = 'failure' WHERE id = ${edited}`.execute(trx);
      await sql`DELETE FROM audit_log WHERE id = ${removed}`.execute(trx);
      await sql`ALTER TABLE audit_log ENABLE ALWAYS TRIGGER audit_log_no_update`.execute(trx);
    });
    const result = await verifyAuditChain(database.db);
    expect(result.broken).toMatchObject({ auditId: edited, reason: 'the audit row or its link was changed' });
    // A small page size walks the same chain across pages and stops at the same row.
    expect((await verifyAuditChain(database.db, 2)).broken?.auditId).toBe(edited);
  });
});

describe.each(databaseKinds())("the audit chain's anchors (%s)", (kind) => {
  let database: TestDatabase;
  const key = Buffer.alloc(32, 7);
  const logged: string[] = [];
  const published: number[] = [];
  let sealer: AuditSealer;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    sealer = new AuditSealer({
      db: database.db,
      log: { info: (fields: { anchor: string }) => logged.push(fields.anchor), warn() {} } as never,
      anchor: { key, intervalMs: 0, published: (anchor) => published.push(anchor.seq) },
    });
  });
  afterAll(async () => {
    await sealer.stop();
    await database.close();
  });

  /** As the tables' owner behind the triggers' back: what the anchors are there to show. */
  const behindTriggers = (statements: ReturnType<typeof sql>[]) =>
    database.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL ROLE NONE`.execute(trx);
      for (const table of ['audit_log', 'audit_chain', 'audit_anchors']) {
        await sql`ALTER TABLE ${sql.id(table)} DISABLE TRIGGER USER`.execute(trx);
      }
      for (const statement of statements) await statement.execute(trx);
      for (const table of ['audit_log', 'audit_chain', 'audit_anchors']) {
        for (const trigger of ['no_update', 'no_truncate']) {
          await sql`ALTER TABLE ${sql.id(table)} ENABLE ALWAYS TRIGGER ${sql.id(`${table}_${trigger}`)}`.execute(
            trx,
          );
        }
      }
    });
  const chainLength = async () => (await verifyAuditChain(database.db)).sealed;
  const kept = async () =>
    (await database.db.selectFrom('audit_anchors').select('seq').orderBy('seq').execute()).map((r) =>
      Number(r.seq),
    );

  it('anchors the head once it moved: a kept row, a log line and the metric, all genuine', async () => {
    await appendAuditRows(
      database.db,
      Array.from({ length: 60 }, (_, n) => row(n)),
    );
    await sealer.sealNow(true);
    const anchor = (await sealer.anchorNow()) as AuditAnchor;
    expect(anchor.seq).toBe(await chainLength());
    expect(await sealer.anchorNow()).toBeNull(); // the head did not move
    expect(await kept()).toEqual([anchor.seq]);
    expect(logged).toEqual([formatAnchor(anchor)]);
    expect(published).toEqual([anchor.seq]);
    expect(parseAnchor(logged[0] ?? '')).toEqual(anchor);
    const check = await verifyAnchors(database.db, key, [anchor], await chainLength());
    expect(check).toEqual({ checked: 2, problems: [], newest: formatAnchor(anchor) });
    // Another key (a copy of the database alone) does not make them genuine.
    const other = await verifyAnchors(database.db, Buffer.alloc(32, 8), [], await chainLength());
    expect(other.problems.map((p) => p.reason)).toEqual([
      'its MAC is not genuine (written without the anchor key)',
    ]);
  });

  it('shows the three newest rows deleted with their links, even with the kept anchors deleted too', async () => {
    await appendAuditRows(database.db, [row(100), row(101), row(102)]);
    await sealer.sealNow();
    const anchor = (await sealer.anchorNow()) as AuditAnchor;
    const length = await chainLength();
    expect(anchor.seq).toBe(length);
    await behindTriggers([
      sql`DELETE FROM audit_log WHERE id IN (SELECT audit_id FROM audit_chain WHERE seq > ${length - 3})`,
      sql`DELETE FROM audit_chain WHERE seq > ${length - 3}`,
    ]);
    // The chain alone still verifies: this is what the anchors are for.
    expect(await verifyAuditChain(database.db)).toMatchObject({ broken: null, sealed: length - 3 });
    const check = await verifyAnchors(database.db, key, [], length - 3);
    expect(check.problems).toEqual([
      {
        anchor: formatAnchor(anchor),
        from: 'kept',
        reason: `link ${length} is gone: the chain ends at link ${length - 3} (rows deleted)`,
      },
    ]);
    // The owner deletes the kept anchor as well: the line logged outside the database still shows it.
    await behindTriggers([sql`DELETE FROM audit_anchors WHERE seq > ${length - 3}`]);
    const outside = parseAnchor(logged.at(-1) ?? '') as AuditAnchor;
    const given = await verifyAnchors(database.db, key, [outside], length - 3);
    expect(given.problems.map((p) => [p.from, p.reason])).toEqual([
      ['given', `link ${length} is gone: the chain ends at link ${length - 3} (rows deleted)`],
    ]);
  });

  it('shows row 50 edited and the chain recomputed after it, and refuses an anchor forged without the key', async () => {
    await appendAuditRows(database.db, [row(200), row(201)]);
    await sealer.sealNow(true);
    const anchor = (await sealer.anchorNow()) as AuditAnchor;
    const fifty = await database.db
      .selectFrom('audit_chain')
      .select(['seq', 'audit_id'])
      .where('seq', '=', 50)
      .executeTakeFirstOrThrow();
    // Edit the row, drop its link and every later one, and let the sealer chain them again.
    await behindTriggers([
      sql`UPDATE audit_log SET result = 'failure' WHERE id = ${fifty.audit_id}`,
      sql`DELETE FROM audit_chain WHERE seq >= 50`,
      sql`DELETE FROM audit_anchors`,
    ]);
    await new AuditSealer({ db: database.db, log: silent }).sealNow(true);
    expect(await verifyAuditChain(database.db)).toMatchObject({ broken: null, sealed: anchor.seq });
    const outside = parseAnchor(logged.at(-1) ?? '') as AuditAnchor;
    const check = await verifyAnchors(database.db, key, [outside], anchor.seq);
    expect(check.problems.map((p) => p.reason)).toEqual([
      `link ${anchor.seq} no longer carries the anchored hash (the chain was rewritten)`,
    ]);
    // An anchor of the rewritten head without the key: its MAC does not hold, kept or given.
    const head = await database.db
      .selectFrom('audit_chain')
      .select(['seq', 'hash'])
      .orderBy('seq', 'desc')
      .executeTakeFirstOrThrow();
    const forged = {
      seq: Number(head.seq),
      hash: head.hash,
      mac: anchorMac(Buffer.alloc(32), Number(head.seq), head.hash),
    };
    await database.db.insertInto('audit_anchors').values(forged).execute();
    const refused = await verifyAnchors(database.db, key, [forged], anchor.seq);
    expect(refused.problems.map((p) => [p.from, p.reason])).toEqual([
      ['kept', 'its MAC is not genuine (written without the anchor key)'],
      ['given', 'its MAC is not genuine (written without the anchor key)'],
    ]);
  });
});

describe.each(databaseKinds())('the audit search at scale (%s)', (kind) => {
  let database: TestDatabase;
  let app: Awaited<ReturnType<typeof buildTestApp>>;
  let token: string;
  const imei = '490154203237518';

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database);
    token = (await loginAs(app, await buildUser(database, { userlevel: 'SUPERADMIN' }))).token;
    await appendAuditRows(
      database.db,
      Array.from({ length: AUDIT_COUNT_CAP + 5 }, (_, n) => row(n, n < 3 ? imei : '356938035643809')),
    );
  });
  afterAll(async () => {
    await app.close();
    await database.close();
  });

  const search = (body: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url: '/api/v2/audit/search',
      headers: { 'x-api-key': token },
      payload: body,
    });

  it('counts no further than the cap and says so', async () => {
    const response = await search({ action: 'command.', limit: 5 });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body).toMatchObject({ total: AUDIT_COUNT_CAP, totalCapped: true });
    expect(body.items).toHaveLength(5);
    const ids = body.items.map((item: { id: number }) => item.id);
    expect(ids).toEqual([...ids].sort((a, b) => b - a));
  });

  it('finds an IMEI exactly, newest first, with its exact count', async () => {
    const body = (await search({ imei })).json();
    expect(body).toMatchObject({ total: 3, totalCapped: false });
    expect(body.items.map((item: { target: string }) => item.target)).toEqual([imei, imei, imei]);
    expect(body.items.map((item: { details: string }) => JSON.parse(item.details).n)).toEqual([2, 1, 0]);
  });
});
