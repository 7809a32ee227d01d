/**
 * Why a row is not found, and batches found again, on the server:
 * - A single command says why it is refused (released, de-enrolled, no device registered); a retailer's
 *   user hears the plain 'not found' for another retailer's device and an unknown IMEI alike.
 * - `/api/v2/batches` lists the batches a caller may read (their own; ADMIN and SUPERADMIN also those of
 *   strictly lower levels; a retailer's user their own only), newest first, in keyset pages.
 * - `/api/v2/batch/results` pages a selection (found, not found, a reason) by S.No.; the first page of
 *   the not found rows is served by an index; `/api/v2/batch/export` streams the selection as the
 *   console's CSV (byte order mark, Reason column), audited.
 * - Refusals answer a clear message and change nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type BatchListItem,
  type BatchResult,
  CSV_BOM,
  IMEI_RESULTS_COLUMNS,
  MESSAGES,
  parseCsvRows,
} from '@lendlock/contract';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RESULT_MESSAGES } from '../src/modules/batches/results';
import { BATCH_AUTHORITY_MESSAGES } from '../src/modules/batches/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { type DeviceServer, randomProfile, registerProfile, startDeviceServer } from './devices';
import { buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

const OURS = '9555555555';
const THEIRS = '9666666666';

type Who =
  | 'userA'
  | 'userB'
  | 'userUnlock'
  | 'admin'
  | 'admin2'
  | 'superadmin'
  | 'superadmin2'
  | 'retailerUser'
  | 'retailerAdmin';

describe.each(databaseKinds())('batch history on %s', (kind) => {
  let database: TestDatabase;
  let server: DeviceServer;
  let dataDir: string;
  const people = {} as Record<Who, { email: string; token: string; id: number }>;
  /** Devices: one enrolled, one released (its release on its way), one de-enrolled, one of each retailer. */
  let enrolled: string;
  let released: string;
  let deenrolled: string;
  let ours: string;
  let theirs: string;
  const unknown = randomProfile().imei1;
  /** Batches by owner. */
  const batchOf = {} as Record<Who, number>;

  const call = (who: Who, method: 'GET' | 'POST', url: string, payload?: object) =>
    server.app.inject({
      method,
      url,
      headers: { 'x-api-key': people[who].token },
      ...(payload ? { payload } : {}),
    });
  const list = async (who: Who, body: object = {}) => {
    const response = await call(who, 'POST', '/api/v2/batches', body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { items: BatchListItem[]; next: number | null };
  };
  const results = async (who: Who, body: object) => {
    const response = await call(who, 'POST', '/api/v2/batch/results', body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json() as { items: BatchResult[]; total: number };
  };
  const upload = async (who: Who, imeis: string[], name = 'history.csv') => {
    const body = multipart({}, { name, type: 'text/csv', content: imeiCsv(imeis) });
    const response = await server.app.inject({
      method: 'POST',
      url: '/api/bulkLockCopy.php',
      headers: { ...body.headers, 'x-api-key': people[who].token },
      payload: body.payload,
    });
    expect(response.statusCode, response.body).toBe(200);
    const batchId = response.json().batchId as number;
    await vi.waitFor(
      async () =>
        expect(
          (await call(who, 'POST', '/api/v2/batch/progress', { batchId })).json().batch?.isComplete,
        ).toBe('complete'),
      { timeout: 30_000, interval: 100 },
    );
    return batchId;
  };
  /** Everything a refusal must leave as it was (the audit log included). */
  const state = async () => {
    const row = await sql<{ s: string }>`SELECT concat_ws('/',
      (SELECT md5(string_agg(b::text, '|' ORDER BY b.id)) FROM batches b),
      (SELECT count(*) FROM batch_items), (SELECT count(*) FROM commands), (SELECT count(*) FROM audit_log),
      (SELECT md5(string_agg(d::text, '|' ORDER BY d.imei1)) FROM devices d)) AS s`.execute(database.db);
    return row.rows[0]?.s;
  };
  const csvRows = async (text: string) => {
    const rows: string[][] = [];
    await parseCsvRows(text, (chunk) => rows.push(...chunk.map((row) => [...row])));
    return rows;
  };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'lendlock-history-'));
    server = await startDeviceServer(database, 'embedded', { dataDir });
    const person = async (
      who: Who,
      level: 'USER' | 'ADMIN' | 'SUPERADMIN',
      options: { permissions?: string[]; retailerPhone?: string } = {},
    ) => {
      const user = await buildUser(database, { userlevel: level, ...options });
      people[who] = { email: user.email, id: user.id, token: (await loginAs(server.app, user)).token };
    };
    await person('userA', 'USER', { permissions: ['lockDevice'] });
    await person('userB', 'USER', { permissions: ['lockDevice'] });
    await person('userUnlock', 'USER', { permissions: ['unlockDevice'] });
    await person('admin', 'ADMIN');
    await person('admin2', 'ADMIN');
    await person('superadmin', 'SUPERADMIN');
    await person('superadmin2', 'SUPERADMIN');
    await person('retailerUser', 'USER', { permissions: ['lockDevice'], retailerPhone: OURS });
    await person('retailerAdmin', 'ADMIN', { retailerPhone: OURS });
    const register = async (retailer: string | null = null) =>
      (await registerProfile(server.app, { retailer_phone: retailer })).profile.imei1;
    [enrolled, released, deenrolled, ours, theirs] = [
      await register(),
      await register(),
      await register(),
      await register(OURS),
      await register(THEIRS),
    ];
    // The device is offline: its release waits, and already refuses every other command.
    expect(
      (await call('admin', 'POST', '/api/locknotification.php', { imei: released, action: 'release' }))
        .statusCode,
    ).toBe(200);
    expect(
      (
        await call('admin', 'POST', '/api/formattedDevice.php', {
          imei: deenrolled,
          action: 'formatteddevice',
        })
      ).statusCode,
    ).toBe(200);
    batchOf.userA = await upload('userA', [enrolled, unknown, released, deenrolled], 'mine.csv');
    batchOf.userB = await upload('userB', [enrolled]);
    batchOf.admin2 = await upload('admin2', [enrolled]);
    batchOf.superadmin2 = await upload('superadmin2', [enrolled]);
    batchOf.retailerUser = await upload('retailerUser', [ours, theirs]);
  });
  afterAll(async () => {
    await server?.close();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  describe('a single command says why it is refused (17.2)', () => {
    it('released, de-enrolled and unknown IMEIs each get their own message', async () => {
      const before = await state();
      for (const [imei, status, message] of [
        [released, 409, MESSAGES.commandReleased],
        [deenrolled, 409, MESSAGES.commandDeenrolled],
        [unknown, 404, MESSAGES.commandNotRegistered],
      ] as const) {
        const response = await call('admin', 'POST', '/api/locknotification.php', { imei, action: 'lock' });
        expect([response.statusCode, response.json().message], imei).toEqual([status, message]);
      }
      // A refusal is not recorded as a command; only its audit rows are written.
      const after = await state();
      expect(after?.split('/').slice(0, 3)).toEqual(before?.split('/').slice(0, 3));
    });

    it("a retailer's user hears the plain 'not found' for another retailer's device and an unknown IMEI alike", async () => {
      const answers = [];
      for (const imei of [theirs, unknown]) {
        const response = await call('retailerUser', 'POST', '/api/locknotification.php', {
          imei,
          action: 'lock',
        });
        answers.push([response.statusCode, response.json().message, response.json().code]);
      }
      expect(answers).toEqual([
        [404, MESSAGES.commandNotFound, 'NOT_FOUND'],
        [404, MESSAGES.commandNotFound, 'NOT_FOUND'],
      ]);
      const mine = await call('retailerUser', 'POST', '/api/locknotification.php', {
        imei: ours,
        action: 'lock',
      });
      expect(mine.statusCode).toBe(200);
    });
  });

  describe('the batch list (17.3)', () => {
    const ids = (page: { items: BatchListItem[] }) => page.items.map((b) => b.batchId);

    it('a USER sees their own batches only, with command, file, owner, counts, phase and times', async () => {
      const page = await list('userA');
      expect(ids(page)).toEqual([batchOf.userA]);
      expect(page.next).toBeNull();
      expect(page.items[0]).toMatchObject({
        statusOf: 'lockfiles',
        command: 'LOCK',
        batchfilename: 'mine.csv',
        owner: people.userA.email,
        interface: 'B',
        total: 4,
        valid: 4,
        found: 1,
        notFound: 3,
        processed: 4,
        phase: 'complete',
        isComplete: 'complete',
      });
      const batch = page.items[0] as BatchListItem;
      expect(Date.parse(batch.createdAt)).toBeLessThanOrEqual(Date.parse(batch.startedAt ?? ''));
      expect(Date.parse(batch.startedAt ?? '')).toBeLessThanOrEqual(Date.parse(batch.completedAt ?? ''));
    });

    it('a USER without the screen of a batch sees none, even of their level', async () => {
      expect(await list('userUnlock')).toEqual({ status: 'success', items: [], next: null });
    });

    it('an ADMIN sees USER batches but no other ADMIN’s nor any SUPERADMIN’s', async () => {
      const seen = ids(await list('admin'));
      expect(seen).toEqual([batchOf.retailerUser, batchOf.userB, batchOf.userA]);
    });

    it('a SUPERADMIN sees USER and ADMIN batches but no other SUPERADMIN’s; its own always', async () => {
      expect(ids(await list('superadmin'))).toEqual([
        batchOf.retailerUser,
        batchOf.admin2,
        batchOf.userB,
        batchOf.userA,
      ]);
      expect(ids(await list('superadmin2'))).toEqual([
        batchOf.retailerUser,
        batchOf.superadmin2,
        batchOf.admin2,
        batchOf.userB,
        batchOf.userA,
      ]);
    });

    it("a retailer's users, whatever their level, see their own batches only", async () => {
      expect(ids(await list('retailerUser'))).toEqual([batchOf.retailerUser]);
      expect(ids(await list('retailerAdmin'))).toEqual([]);
    });

    it('pages newest first by id (keyset), and filters by feature', async () => {
      const first = await list('superadmin2', { limit: 2 });
      expect(ids(first)).toEqual([batchOf.retailerUser, batchOf.superadmin2]);
      expect(first.next).toBe(batchOf.superadmin2);
      const second = await list('superadmin2', { limit: 2, before: first.next });
      expect(ids(second)).toEqual([batchOf.admin2, batchOf.userB]);
      const third = await list('superadmin2', { limit: 2, before: second.next });
      expect(ids(third)).toEqual([batchOf.userA]);
      expect(third.next).toBeNull();
      expect(ids(await list('superadmin2', { statusOf: 'unlockfiles' }))).toEqual([]);
      expect(ids(await list('userA', { statusOf: 'lockfiles' }))).toEqual([batchOf.userA]);
    });

    it('refuses a bad page with a clear 400 and changes nothing', async () => {
      const before = await state();
      for (const body of [{ limit: 0 }, { limit: 501 }, { before: -1 }, { statusOf: 'x'.repeat(65) }]) {
        const response = await call('admin', 'POST', '/api/v2/batches', body);
        expect(response.statusCode, JSON.stringify(body)).toBe(400);
        expect(response.json().status).toBe('error');
      }
      expect(await state()).toBe(before);
    });
  });

  describe('a batch’s results: selections, keyset pages and the reason (17.2, 17.3)', () => {
    it('each not found row says why; found, not found and a reason select their rows', async () => {
      const batchId = batchOf.userA;
      const all = await results('userA', { batchId });
      expect(all.total).toBe(4);
      expect(all.items.map((r) => [r.sno, r.imei, r.validate, r.note])).toEqual([
        [1, enrolled, 'found', null],
        [2, unknown, 'not found', 'not registered'],
        [3, released, 'not found', 'released'],
        [4, deenrolled, 'not found', 'de-enrolled'],
      ]);
      const found = await results('userA', { batchId, filter: 'found' });
      expect([found.total, found.items.map((r) => r.sno)]).toEqual([1, [1]]);
      const notFound = await results('userA', { batchId, filter: 'notFound' });
      expect([notFound.total, notFound.items.map((r) => r.sno)]).toEqual([3, [2, 3, 4]]);
      const page = await results('userA', { batchId, filter: 'notFound', offset: 2, limit: 1 });
      expect(page.items.map((r) => r.sno)).toEqual([3]);
      for (const [reason, sno] of [
        ['released', 3],
        ['de-enrolled', 4],
        ['not registered', 2],
      ] as const) {
        const one = await results('userA', { batchId, filter: 'notFound', reason });
        expect([one.total, one.items.map((r) => r.sno)], reason).toEqual([1, [sno]]);
      }
      // A reason alone selects the not found rows of that reason.
      expect((await results('userA', { batchId, reason: 'released' })).items.map((r) => r.sno)).toEqual([3]);
    });

    it('refuses a selection that names no rows, an unknown reason, and another user’s batch, changing nothing', async () => {
      const before = await state();
      const batchId = batchOf.userA;
      const contradictory = await call('userA', 'POST', '/api/v2/batch/results', {
        batchId,
        filter: 'found',
        reason: 'released',
      });
      expect([contradictory.statusCode, contradictory.json().message]).toEqual([
        400,
        RESULT_MESSAGES.reasonNeedsNotFound,
      ]);
      const unknownReason = await call('userA', 'POST', '/api/v2/batch/results', {
        batchId,
        reason: 'stolen',
      });
      expect(unknownReason.statusCode).toBe(400);
      const badFilter = await call('userA', 'GET', `/api/v2/batch/export?batchId=${batchId}&filter=lost`);
      expect(badFilter.statusCode).toBe(400);
      for (const [who, message] of [
        ['userB', BATCH_AUTHORITY_MESSAGES.notYours],
        ['admin2', BATCH_AUTHORITY_MESSAGES.notYours],
        ['userUnlock', MESSAGES.unauthorised],
      ] as const) {
        const read = await call(who, 'POST', '/api/v2/batch/results', { batchId: batchOf.superadmin2 });
        expect([read.statusCode, read.json().message], who).toEqual([403, message]);
        const file = await call(who, 'GET', `/api/v2/batch/export?batchId=${batchOf.superadmin2}`);
        expect([file.statusCode, file.json().message], who).toEqual([403, message]);
        expect(file.body).not.toContain(enrolled);
      }
      const missing = await call('superadmin', 'GET', '/api/v2/batch/export?batchId=999999999');
      expect(missing.statusCode).toBe(404);
      expect(await state()).toBe(before);
    });

    it('downloads the selection as imei_data.csv with the byte order mark and the Reason, and audits it', async () => {
      const batchId = batchOf.userA;
      const response = await call('admin', 'GET', `/api/v2/batch/export?batchId=${batchId}`);
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['content-type']).toBe('text/csv; charset=utf-8');
      expect(response.headers['content-disposition']).toBe('attachment; filename="imei_data.csv"');
      expect(response.headers['x-total-rows']).toBe('4');
      expect(response.body.startsWith(CSV_BOM)).toBe(true);
      expect(response.rawPayload.subarray(0, 3)).toEqual(Buffer.from([0xef, 0xbb, 0xbf]));
      expect(await csvRows(response.body.slice(1))).toEqual([
        [...IMEI_RESULTS_COLUMNS],
        ['1', enrolled, 'found', ''],
        ['2', unknown, 'not found', 'not registered'],
        ['3', released, 'not found', 'released'],
        ['4', deenrolled, 'not found', 'de-enrolled'],
      ]);
      expect(response.body.split('\r\n')[0]).toBe(`${CSV_BOM}S.No.,IMEI,Status,Reason`);
      const audit = await database.db
        .selectFrom('audit_log')
        .select(['actor', 'action', 'target', 'result', 'details'])
        .where('action', '=', 'batch.export')
        .orderBy('id', 'desc')
        .executeTakeFirstOrThrow();
      expect(audit).toMatchObject({
        actor: people.admin.email,
        target: `batch:${batchId}`,
        result: 'success',
        details: { filter: 'all', reason: null, rows: 4 },
      });

      const oneReason = await call('userA', 'GET', `/api/v2/batch/export?batchId=${batchId}&reason=released`);
      expect(oneReason.headers['x-total-rows']).toBe('1');
      expect((await csvRows(oneReason.body.slice(1))).slice(1).map((r) => r[0])).toEqual(['3']);
      const found = await call('userA', 'GET', `/api/v2/batch/export?batchId=${batchId}&filter=found`);
      expect(await csvRows(found.body.slice(1))).toEqual([
        [...IMEI_RESULTS_COLUMNS],
        ['1', enrolled, 'found', ''],
      ]);
    });

    it('pages and streams a large result by S.No., and an index serves the first page of its not found rows', async () => {
      // A finished batch of 12,001 rows written straight into the tables: every seventh row not found.
      const rows = 12_001;
      const batch = await database.db
        .insertInto('batches')
        .values({
          feature: 'lockfiles',
          command: 'LOCK',
          file_name: 'large.csv',
          user_label: people.userA.email,
          user_id: people.userA.id,
          status: 'complete',
          total: rows,
          valid: rows,
          processed: rows,
          found: rows - Math.floor(rows / 7),
          not_found: Math.floor(rows / 7),
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      const batchId = Number(batch.id);
      await sql`
        INSERT INTO batch_items (batch_id, seq, imei, result, note)
        SELECT ${batchId}::bigint, g, (350000000000000 + g)::text,
               CASE WHEN g % 7 = 0 THEN 'not found' ELSE 'found' END,
               CASE WHEN g % 7 = 0 THEN (CASE WHEN g % 14 = 0 THEN 'released' ELSE 'not registered' END) END
        FROM generate_series(1, ${rows}) g`.execute(database.db);
      // As the table's owner (the app's connections run as the row-level-security role, ADR 0011).
      await database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL ROLE NONE`.execute(trx);
        await sql`ANALYZE batch_items`.execute(trx);
      });

      // Keyset pages of the not found rows: every one once, in order.
      const seen: number[] = [];
      for (let offset = 0; ; ) {
        const page = await results('userA', { batchId, filter: 'notFound', offset, limit: 500 });
        expect(page.total).toBe(Math.floor(rows / 7));
        seen.push(...page.items.map((r) => r.sno));
        if (page.items.length < 500) break;
        offset = page.items.at(-1)?.sno ?? 0;
      }
      expect(seen).toEqual(Array.from({ length: Math.floor(rows / 7) }, (_, i) => (i + 1) * 7));

      // The first page of a selection of not found rows reads an index, not the batch.
      for (const note of [null, 'released']) {
        const plan = await sql<Record<string, string>>`EXPLAIN SELECT * FROM batch_items
          WHERE batch_id = ${batchId} AND result = 'not found' ${note ? sql`AND note = ${note}` : sql``}
            AND seq > 0 ORDER BY seq LIMIT 1000`.execute(database.db);
        const text = plan.rows.map((row) => Object.values(row).join(' ')).join('\n');
        expect(text, text).toMatch(/batch_items_not_found/);
        // Not the batch's rows (the row-level security policy's subplan over `batches` is never
        // executed for the lender: its first arm, the '*' tenant, holds).
        expect(text).not.toMatch(/Seq Scan on batch_items/);
      }

      // The download streams every row (three reads of 5,000), in order.
      const response = await call('userA', 'GET', `/api/v2/batch/export?batchId=${batchId}`);
      expect(response.headers['x-total-rows']).toBe(String(rows));
      const file = await csvRows(response.body.slice(1));
      expect(file).toHaveLength(rows + 1);
      expect(file.slice(1).map((r) => Number(r[0]))).toEqual(Array.from({ length: rows }, (_, i) => i + 1));
      expect(file[14]).toEqual(['14', '350000000000014', 'not found', 'released']);
      expect(file[7]).toEqual(['7', '350000000000007', 'not found', 'not registered']);
      expect(response.body.endsWith('\r\n')).toBe(false);
    });
  });
});
