/**
 * Uploads cannot fill the disk or the memory. A refused bulk upload (too large, not a CSV, bad rows, no
 * rows, someone else's `user`, too many rows) leaves no file under DATA_DIR and no row in the database.
 * An error report quotes at most 200 characters of a bad row and lists at most 1,000 bad rows, with
 * their count. An accepted file is kept UPLOAD_RETENTION, then the sweep deletes it, and its history
 * link answers 410 with the reason. The financed-IMEI upload is read as it streams, within the same
 * bounds.
 */
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { MAX_INVALID_ROWS, MESSAGES, REPORT_TRUNCATION, type Session } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config';
import { INCOMING_DIR, UPLOAD_MESSAGES } from '../src/lib/upload';
import { BATCH_MESSAGES } from '../src/modules/batches/routes';
import { FINANCED_MESSAGES } from '../src/modules/devices/financed';
import { INCOMING_MAX_AGE_MS, sweepUploads } from '../src/modules/uploads/retention';
import { UPLOAD_LINK_MESSAGES } from '../src/modules/uploads/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';
import { imeiCsv, multipart } from './multipart';

const DAY = 86_400_000;
const IMEIS = ['356938035643809', '490154203237518', '353918054478912'];

/** Every file under `dir`, relative to it. */
function filesUnder(dir: string): string[] {
  const found: string[] = [];
  const walk = (at: string) => {
    let names: string[];
    try {
      names = readdirSync(at);
    } catch {
      return;
    }
    for (const name of names) {
      const path = join(at, name);
      if (statSync(path).isDirectory()) walk(path);
      else found.push(relative(dir, path));
    }
  };
  walk(dir);
  return found.sort();
}

describe.each(databaseKinds())('uploads on %s', (kind) => {
  let database: TestDatabase;
  let dataDir: string;
  let app: FastifyInstance;
  /** The same server with a 1 MB upload limit and a 5-row batch limit. */
  let small: FastifyInstance;
  let admin: Session;
  let adminEmail: string;

  const count = async (table: 'batches' | 'batch_chunks' | 'financed_imeis' | 'audit_log') =>
    Number(
      (await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(table)}`.execute(database.db))
        .rows[0]?.n,
    );
  const stored = async () => ({
    batches: await count('batches'),
    chunks: await count('batch_chunks'),
    financed: await count('financed_imeis'),
    audit: await count('audit_log'),
    files: filesUnder(dataDir),
  });
  const upload = (
    server: FastifyInstance,
    content: string | Buffer,
    options: { script?: string; fields?: Record<string, string>; name?: string; type?: string } = {},
  ) => {
    const body = multipart(options.fields ?? {}, {
      name: options.name ?? 'devices.csv',
      type: options.type ?? 'text/csv',
      content,
    });
    return server.inject({
      method: 'POST',
      url: `/api/${options.script ?? 'bulkLockCopy'}.php`,
      headers: { ...body.headers, 'x-api-key': admin.token },
      payload: body.payload,
    });
  };

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    dataDir = mkdtempSync(join(tmpdir(), 'lendlock-uploads-'));
    app = await buildTestApp(database, { dataDir });
    small = await buildTestApp(database, { dataDir, uploadMaxBytes: 1024 * 1024, batchMaxRows: 5 });
    // Batches stay queued: these tests are about the files, not the devices.
    await app.ctx.batchWorker.stop();
    await small.ctx.batchWorker.stop();
    const user = await buildUser(database, { userlevel: 'ADMIN' });
    adminEmail = user.email;
    admin = await loginAs(app, user);
  });
  afterAll(async () => {
    await small?.close();
    await app?.close();
    await database?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('keeps nothing of a refused upload: no file under DATA_DIR, no row', async () => {
    const before = await stored();
    expect(before.files).toEqual([]);
    type Answer = { statusCode: number; json(): { message: string } };
    // One after another: each refusal is checked on its own.
    const refusals: [string, () => Promise<Answer>, number, string][] = [
      [
        'too large (the 100 MB partial file used to stay)',
        () => upload(small, `Sno,IMEI1\n${'1,356938035643809\n'.repeat(100_000)}`),
        413,
        UPLOAD_MESSAGES.tooLarge,
      ],
      ['bad rows', () => upload(app, 'Sno,IMEI1\n1,123\n'), 400, MESSAGES.csvIncorrect],
      ['no header at all', () => upload(app, ''), 400, MESSAGES.csvIncorrect],
      [
        "someone else's user field",
        () => upload(app, imeiCsv(IMEIS), { fields: { user: 'someone.else@lendlock.com' } }),
        403,
        BATCH_MESSAGES.userMismatch,
      ],
      [
        'not a CSV',
        () => upload(app, 'PK\u0003\u0004', { name: 'devices.xlsx', type: 'application/zip' }),
        415,
        MESSAGES.onlyCsv,
      ],
      [
        'a NUL character in a Notify name (PostgreSQL refused it: a 500)',
        () =>
          upload(app, `sno,name,imei1,amount,date,template\n1,A\u0000B,${IMEIS[0]},10,01/12/2030,Pre\n`, {
            script: 'bulkNotifyCopy',
          }),
        400,
        MESSAGES.csvIncorrect,
      ],
      [
        'a NUL character in the file name (a 500 before)',
        () => upload(app, imeiCsv(IMEIS), { name: 'a\u0000b.csv' }),
        400,
        'Invalid file name: must not contain NUL characters',
      ],
      [
        'over the row limit',
        () => upload(small, imeiCsv([...IMEIS, ...IMEIS])),
        400,
        'The file has more than 5 rows.',
      ],
    ];
    for (const [what, send, status, message] of refusals) {
      const response = await send();
      expect({ what, status: response.statusCode, message: response.json().message }).toEqual({
        what,
        status,
        message,
      });
      expect(await stored(), what).toEqual(before);
    }
    // A file with a header and no rows passes with nothing to process, and is not kept either.
    const empty = await upload(app, 'Sno,IMEI1\r\n');
    expect(empty.statusCode).toBe(200);
    expect(empty.json()).toMatchObject({ batchId: null, total: 0 });
    expect(await stored()).toEqual(before);
  });

  it('keeps an accepted upload under uploads/<statusOf>/, linked from the history, and nothing in incoming/', async () => {
    const response = await upload(app, imeiCsv(IMEIS), { fields: { user: adminEmail }, name: 'mine.csv' });
    expect(response.statusCode).toBe(200);
    const batch = await database.db
      .selectFrom('batches')
      .select(['stored_file', 'file_name'])
      .where('id', '=', response.json().batchId)
      .executeTakeFirstOrThrow();
    expect(batch.file_name).toBe('mine.csv');
    // 128 random bits, then the name it was uploaded with: a name nobody guesses.
    expect(batch.stored_file).toMatch(/^lockfiles\/[0-9a-f]{32}-mine\.csv$/);
    expect(filesUnder(dataDir)).toEqual([join('uploads', batch.stored_file ?? '')]);
    const link = await app.inject({
      url: `/api/v2/uploads/${batch.stored_file}`,
      headers: { 'x-api-key': admin.token },
    });
    expect(link.statusCode).toBe(200);
    expect(link.headers['content-disposition']).toBe('attachment; filename="mine.csv"');
    expect(link.body).toBe(imeiCsv(IMEIS));
    rmSync(join(dataDir, 'uploads'), { recursive: true, force: true });
  });

  it('answers a 90 MB single line with 200 characters of it and its length, not the line', async () => {
    const before = await stored();
    const line = `1,${'7'.repeat(90 * 1024 * 1024)}`;
    const response = await upload(app, `Sno,IMEI1\n${line}\n2,${IMEIS[0]}\n`);
    expect(response.statusCode).toBe(400);
    // The answer is a few hundred bytes, whatever the line (it used to carry the 90 MB back).
    expect(response.rawPayload.length).toBeLessThan(1000);
    expect(response.json()).toEqual({
      status: 'error',
      code: 'VALIDATION_FAILED',
      message: MESSAGES.csvIncorrect,
      invalid: [
        {
          line: 2,
          error: MESSAGES.invalidImeiLength,
          data: `1,${'7'.repeat(198)}${REPORT_TRUNCATION.moreCharacters(line.length - 200)}`,
        },
      ],
      invalidCount: 1,
    });
    expect(await stored()).toEqual(before);
  });

  it('lists the first 1,000 bad rows of a file with more, and says how many more', async () => {
    const before = await stored();
    const rows = Array.from({ length: 2500 }, (_, i) => `${i + 1},${i}`);
    const response = await upload(app, `Sno,IMEI1\n${rows.join('\n')}\n`, { script: 'bulkUnlockCopy' });
    expect(response.statusCode).toBe(400);
    const json = response.json();
    expect(json.invalid).toHaveLength(MAX_INVALID_ROWS);
    expect(json.invalid[0]).toEqual({ line: 2, error: MESSAGES.invalidImeiLength, data: '1,0' });
    expect(json.invalidCount).toBe(2500);
    expect(json.more).toBe('and 1,500 more rows');
    expect(await stored()).toEqual(before);
  });

  it('deletes files past UPLOAD_RETENTION; their links then answer 410 with the reason', async () => {
    const old = await upload(app, imeiCsv(IMEIS), { name: 'old.csv' });
    const fresh = await upload(app, imeiCsv(IMEIS), { name: 'fresh.csv' });
    const rowOf = (id: number) =>
      database.db
        .selectFrom('batches')
        .select(['id', 'stored_file', 'file_removed_at'])
        .where('id', '=', id)
        .executeTakeFirstOrThrow();
    const oldRow = await rowOf(old.json().batchId);
    const freshRow = await rowOf(fresh.json().batchId);
    // The old one was written 91 days ago (the retention is 90 days by default).
    const then = new Date(Date.now() - 91 * DAY);
    utimesSync(join(dataDir, 'uploads', oldRow.stored_file ?? ''), then, then);
    await database.db
      .updateTable('batches')
      .set({ created_at: then } as never)
      .where('id', '=', oldRow.id)
      .execute();
    // What a crash left half-received two days ago, and an upload arriving now.
    mkdirSync(join(dataDir, INCOMING_DIR), { recursive: true });
    const leftover = join(dataDir, INCOMING_DIR, 'crashed.part');
    const arriving = join(dataDir, INCOMING_DIR, 'arriving.part');
    writeFileSync(leftover, 'Sno,IMEI1\n');
    writeFileSync(arriving, 'Sno,IMEI1\n');
    const twoDays = new Date(Date.now() - INCOMING_MAX_AGE_MS * 2);
    utimesSync(leftover, twoDays, twoDays);

    const swept = await sweepUploads({
      db: database.db,
      dataDir,
      retentionMs: app.ctx.config.uploadRetentionMs,
      log: app.log,
    });
    expect(swept).toEqual({ removed: [oldRow.stored_file], marked: 1, leftovers: 1 });
    expect(filesUnder(dataDir)).toEqual(
      [join(INCOMING_DIR, 'arriving.part'), join('uploads', freshRow.stored_file ?? '')].sort(),
    );
    expect((await rowOf(oldRow.id)).file_removed_at).not.toBeNull();
    expect((await rowOf(freshRow.id)).file_removed_at).toBeNull();

    const link = (row: { stored_file: string | null }) =>
      app.inject({ url: `/api/v2/uploads/${row.stored_file}`, headers: { 'x-api-key': admin.token } });
    const gone = await link(oldRow);
    expect(gone.statusCode).toBe(410);
    expect(gone.json()).toEqual({
      status: 'error',
      code: 'GONE',
      message: 'This file was removed after 90 days (UPLOAD_RETENTION).',
    });
    expect((await link(freshRow)).statusCode).toBe(200);
    // A second sweep finds nothing more to do.
    const again = await sweepUploads({ db: database.db, dataDir, retentionMs: 90 * DAY, log: app.log });
    expect(again).toEqual({ removed: [], marked: 0, leftovers: 0 });
    rmSync(join(dataDir, 'uploads'), { recursive: true, force: true });
    rmSync(join(dataDir, INCOMING_DIR), { recursive: true, force: true });
  });

  it('says 410 for an old file another instance deleted before recording it, 404 for a young one it holds', async () => {
    const response = await upload(app, imeiCsv(IMEIS), { name: 'elsewhere.csv' });
    const row = await database.db
      .selectFrom('batches')
      .select(['id', 'stored_file'])
      .where('id', '=', response.json().batchId)
      .executeTakeFirstOrThrow();
    rmSync(join(dataDir, 'uploads'), { recursive: true, force: true });
    const link = () =>
      app.inject({ url: `/api/v2/uploads/${row.stored_file}`, headers: { 'x-api-key': admin.token } });
    expect((await link()).json()).toEqual({
      status: 'error',
      code: 'NOT_FOUND',
      message: UPLOAD_LINK_MESSAGES.noSuchFile,
    });
    await database.db
      .updateTable('batches')
      .set({ created_at: new Date(Date.now() - 91 * DAY) } as never)
      .where('id', '=', row.id)
      .execute();
    const gone = await link();
    expect(gone.statusCode).toBe(410);
    expect(gone.json().message).toBe(UPLOAD_LINK_MESSAGES.removed(90 * DAY));
  });

  it('reads UPLOAD_RETENTION as a duration, 90 days by default, and says it in the message', () => {
    expect(loadConfig({}).uploadRetentionMs).toBe(90 * DAY);
    expect(loadConfig({ UPLOAD_RETENTION: '12h' }).uploadRetentionMs).toBe(12 * 3_600_000);
    expect(() => loadConfig({ UPLOAD_RETENTION: 'a while' })).toThrow(
      'UPLOAD_RETENTION must be a duration like 8h, 30m, 45s or 1500ms',
    );
    expect(UPLOAD_LINK_MESSAGES.removed(12 * 3_600_000)).toBe(
      'This file was removed after 12 hours (UPLOAD_RETENTION).',
    );
    expect(UPLOAD_LINK_MESSAGES.removed(DAY)).toBe('This file was removed after 1 day (UPLOAD_RETENTION).');
  });

  it('reads the financed-IMEI upload as it streams, within the same limits, changing nothing on a refusal', async () => {
    const financed = (server: FastifyInstance, content: string) => {
      const body = multipart({}, { name: 'financed.csv', type: 'text/csv', content });
      return server.inject({
        method: 'POST',
        url: '/api/v2/financedImeis/upload',
        headers: { ...body.headers, 'x-api-key': admin.token },
        payload: body.payload,
      });
    };
    const before = await stored();
    for (const [what, server, content, status, message] of [
      ['too large', small, `imei1\n${`${IMEIS[0]}\n`.repeat(80_000)}`, 413, UPLOAD_MESSAGES.tooLarge],
      [
        'too many rows',
        small,
        `imei1\n${[...IMEIS, ...IMEIS].join('\n')}\n`,
        400,
        'The file has more than 5 rows.',
      ],
      ['a bad row', app, `imei1\n${IMEIS[0]}\n\n123\n`, 400, FINANCED_MESSAGES.badRow(4)],
      ['no imei1 column', app, `serial\n${IMEIS[0]}\n`, 400, FINANCED_MESSAGES.noColumn],
      ['a 5 MB line', app, `imei1\n${'7'.repeat(5_000_000)}\n`, 400, FINANCED_MESSAGES.badRow(2)],
    ] as const) {
      const response = await financed(server, content);
      expect({ what, status: response.statusCode, message: response.json().message }).toEqual({
        what,
        status,
        message,
      });
      expect(await stored(), what).toEqual(before);
    }
    const accepted = await financed(app, `\uFEFFbrand,IMEI1\nx,${IMEIS[0]}\ny,${IMEIS[1]}\nz,${IMEIS[0]}\n`);
    expect(accepted.json()).toMatchObject({ status: 'success', added: 2 });
    expect(filesUnder(dataDir)).toEqual([]);
  });
});
