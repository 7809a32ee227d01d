/**
 * The database enforces the tenant boundary. Every table that holds a tenant's data has rows
 * of the lender, retailer A and retailer B; raw SQL in A's transaction sees only A's rows, changes none of
 * B's and cannot write one for B; a connection that never set its tenant sees nothing; the system sees
 * every row. Over HTTP, a route that forgot its own retailer filter still answers a retailer with its
 * own rows only; shared work woken from a retailer's request still reaches the other tenants' rows.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '../src/authz/policies';
import { TENANT_ROLE } from '../src/db/roles';
import { asSystem, asSystemWithin, currentTenant, withTenant } from '../src/db/tenant';
import { TENANT_TABLES } from '../src/db/tenant-tables';
import type { DB } from '../src/db/types';
import { Poller } from '../src/lib/poller';
import { SessionAuthenticator } from '../src/modules/auth/service';
import { emitEvents } from '../src/modules/webhooks/repository';
import { registerAuth } from '../src/plugins/auth';
import { registerErrorHandling } from '../src/plugins/errors';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

const PHONE_A = '9811100001';
const PHONE_B = '9822200002';

type Tag = 'L' | 'A' | 'B';
const PHONES: Record<Tag, string | null> = { L: null, A: PHONE_A, B: PHONE_B };
const DIGIT: Record<Tag, string> = { L: '3', A: '1', B: '2' };

/** The keys of one tenant's seeded rows. */
interface Seeded {
  user: number;
  imei: string;
  endpoint: number;
  batch: number;
  loan: number;
}

/** Table → the column that ties a row to the seeded key of its tenant (the test's own oracle). */
const OWNER_COLUMN: Record<string, [column: string, key: keyof Seeded]> = {
  users: ['id', 'user'],
  devices: ['imei1', 'imei'],
  webhook_endpoints: ['id', 'endpoint'],
  api_keys: ['user_id', 'user'],
  sessions: ['user_id', 'user'],
  user_permissions: ['user_id', 'user'],
  user_mfa: ['user_id', 'user'],
  mfa_recovery_codes: ['user_id', 'user'],
  mfa_challenges: ['user_id', 'user'],
  password_resets: ['user_id', 'user'],
  login_known_networks: ['user_id', 'user'],
  commands: ['imei1', 'imei'],
  collection_holds: ['imei1', 'imei'],
  collection_actions: ['imei1', 'imei'],
  batches: ['id', 'batch'],
  batch_items: ['batch_id', 'batch'],
  batch_chunks: ['batch_id', 'batch'],
  loans: ['id', 'loan'],
  loan_instalments: ['loan_id', 'loan'],
  loan_payments: ['loan_id', 'loan'],
  webhook_deliveries: ['endpoint_id', 'endpoint'],
  registrations: ['imei1', 'imei'],
  releases: ['imei1', 'imei'],
  deenrollments: ['imei1', 'imei'],
  reregistration_requests: ['imei1', 'imei'],
};

/** The column an UPDATE sets to itself (identity columns cannot be set). */
const UPDATE_COLUMN: Record<string, string> = {
  users: 'email',
  webhook_endpoints: 'url',
  batches: 'user_label',
  loans: 'customer_name',
};

async function one<T>(db: Kysely<DB>, query: ReturnType<typeof sql<T>>): Promise<T> {
  const rows = (await query.execute(db)).rows;
  return rows[0] as T;
}

/** One row of every tenant table for `tag` (as the system). */
async function seed(db: Kysely<DB>, tag: Tag): Promise<Seeded> {
  const phone = PHONES[tag];
  const d = DIGIT[tag];
  const imei = `35${d.repeat(13)}`;
  const { id: user } = await one<{ id: number }>(
    db,
    sql`INSERT INTO users (email, password_hash, userlevel, retailer_phone)
        VALUES (${`rls-${tag}@lendlock.com`}, 'x', 'ADMIN', ${phone}) RETURNING id`,
  );
  await sql`INSERT INTO devices (imei1, retailer_phone) VALUES (${imei}, ${phone})`.execute(db);
  const { id: endpoint } = await one<{ id: number }>(
    db,
    sql`INSERT INTO webhook_endpoints (url, events, secret_sealed, created_by, retailer_phone)
        VALUES (${`https://hooks.example.com/${tag}`}, ARRAY['command.executed'], 's', 'seed', ${phone})
        RETURNING id`,
  );
  const statements = [
    sql`INSERT INTO api_keys (key_name, key_hash, user_id) VALUES (${`key ${tag}`}, ${`kh-${tag}`}, ${user})`,
    sql`INSERT INTO sessions (token_hash, user_id, expires_at) VALUES (${`sh-${tag}`}, ${user}, now() + interval '1 hour')`,
    sql`INSERT INTO user_permissions (user_id, permission_id) SELECT ${user}, min(id) FROM permissions`,
    sql`INSERT INTO user_mfa (user_id, secret) VALUES (${user}, ${`secret-${tag}`})`,
    sql`INSERT INTO mfa_recovery_codes (user_id, code_hash) VALUES (${user}, ${`rc-${tag}`})`,
    sql`INSERT INTO mfa_challenges (token_hash, user_id, client, expires_at)
        VALUES (${`ch-${tag}`}, ${user}, 'console', now() + interval '1 hour')`,
    sql`INSERT INTO password_resets (token_hash, user_id, expires_at)
        VALUES (${`pr-${tag}`}, ${user}, now() + interval '1 hour')`,
    sql`INSERT INTO login_known_networks (user_id, network_hash) VALUES (${user}, ${`nh-${tag}`})`,
    sql`INSERT INTO commands (transaction_id, imei1, command, kind, interface, user_label)
        VALUES (${`tx-${tag}`}, ${imei}, 'LOCK', 'state', 'S', 'seed')`,
    sql`INSERT INTO collection_holds (imei1, reason, held_by) VALUES (${imei}, 'seed', 'seed')`,
    sql`INSERT INTO registrations (imei1, match_status, registration_status, retailer_phone)
        VALUES (${imei}, 'YES', 'REGISTERED', ${phone})`,
    sql`INSERT INTO releases (imei1, released_by) VALUES (${imei}, 'seed')`,
    sql`INSERT INTO deenrollments (imei1, action) VALUES (${imei}, 'seed')`,
    sql`INSERT INTO reregistration_requests (imei1, profile) VALUES (${imei}, '{}'::jsonb)`,
  ];
  for (const statement of statements) await statement.execute(db);
  const { id: batch } = await one<{ id: number }>(
    db,
    sql`INSERT INTO batches (feature, command, user_label, user_id) VALUES ('lock', 'LOCK', 'seed', ${user}) RETURNING id`,
  );
  await sql`INSERT INTO batch_items (batch_id, seq, imei) VALUES (${batch}, 1, ${imei})`.execute(db);
  await sql`INSERT INTO batch_chunks (batch_id, first_seq, seqs, imeis) VALUES (${batch}, 1, ARRAY[1], ARRAY[${imei}])`.execute(
    db,
  );
  const { id: loan } = await one<{ id: number }>(
    db,
    sql`INSERT INTO loans (loan_ref, imei, customer_name, currency)
        VALUES (${`loan-${tag}`}, ${imei}, 'Customer', 'INR') RETURNING id`,
  );
  await sql`INSERT INTO loan_instalments (loan_id, seq, due_date, amount_minor) VALUES (${loan}, 1, '2030-01-01', 100)`.execute(
    db,
  );
  await sql`INSERT INTO loan_payments (loan_id, payment_ref, amount_minor, paid_at) VALUES (${loan}, ${`pay-${tag}`}, 50, now())`.execute(
    db,
  );
  await sql`INSERT INTO collection_actions (loan_id, imei1, kind, action_date, version, rule, state)
      VALUES (${loan}, ${imei}, 'LOCK', '2030-01-02', 1, 'seed', 'SKIPPED')`.execute(db);
  await sql`INSERT INTO webhook_deliveries (endpoint_id, message_id, event, payload, give_up_at)
      VALUES (${endpoint}, ${`msg-${tag}`}, 'command.completed', '{}'::jsonb, now() + interval '1 day')`.execute(
    db,
  );
  return { user, imei, endpoint, batch, loan };
}

/** Every row of `table` (as text, sorted) that `db` sees, or only those of `owner` (the oracle). */
async function rowsOf(db: Kysely<DB>, table: string, owner?: Seeded): Promise<string[]> {
  const [column, key] = OWNER_COLUMN[table] as [string, keyof Seeded];
  const where = owner ? sql`WHERE ${sql.ref(`t.${column}`)} = ${owner[key]}` : sql``;
  const result = await sql<{
    row: string;
  }>`SELECT t::text AS row FROM ${sql.table(table)} t ${where}`.execute(db);
  return result.rows.map((r) => r.row).sort();
}

/** B's rows of every table, as the system: what A's attempts must leave as they were. */
async function rowsOfTenant(db: Kysely<DB>, owner: Seeded): Promise<Record<string, string[]>> {
  const all: Record<string, string[]> = {};
  for (const table of TENANT_TABLES) all[table] = await asSystem(() => rowsOf(db, table, owner));
  return all;
}

describe.each(databaseKinds())('row-level security (%s)', (kind) => {
  let database: TestDatabase;
  let seeded: Record<Tag, Seeded>;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    seeded = {
      L: await seed(database.db, 'L'),
      A: await seed(database.db, 'A'),
      B: await seed(database.db, 'B'),
    };
  });
  afterAll(async () => {
    await database?.close();
  });

  it('covers every table the oracle knows, and nothing runs as a role that bypasses it', async () => {
    expect([...TENANT_TABLES].sort()).toEqual(Object.keys(OWNER_COLUMN).sort());
    const row = await one<{ active: boolean; role: string }>(
      database.db,
      sql`SELECT row_security_active('devices') AS active, current_user AS role`,
    );
    expect(row.active).toBe(true);
  });

  it("a retailer's transaction sees only its own rows, in every table", async () => {
    const expected: Record<string, string[]> = await rowsOfTenant(database.db, seeded.A);
    await withTenant(PHONE_A, () =>
      database.db.transaction().execute(async (trx) => {
        for (const table of TENANT_TABLES) {
          expect(expected[table], table).toHaveLength(1);
          expect(await rowsOf(trx, table), table).toEqual(expected[table]);
        }
      }),
    );
  });

  it("raw sql on the app's Kysely, as a retailer, sees only its own rows", async () => {
    for (const table of TENANT_TABLES) {
      const expected = await rowsOf(database.db, table, seeded.B);
      expect(await withTenant(PHONE_B, () => rowsOf(database.db, table)), table).toEqual(expected);
    }
  });

  it('the lender and the system see every row', async () => {
    for (const table of TENANT_TABLES) {
      const expected = [
        ...(await rowsOf(database.db, table, seeded.L)),
        ...(await rowsOf(database.db, table, seeded.A)),
        ...(await rowsOf(database.db, table, seeded.B)),
      ].sort();
      expect(await withTenant(null, () => rowsOf(database.db, table)), table).toEqual(expected);
      expect(await asSystem(() => rowsOf(database.db, table)), table).toEqual(expected);
    }
  });

  it("a retailer's UPDATE and DELETE of another tenant's rows change nothing; its own are reachable", async () => {
    const before = await rowsOfTenant(database.db, seeded.B);
    const lenderBefore = await rowsOfTenant(database.db, seeded.L);
    await withTenant(PHONE_A, () =>
      database.db.transaction().execute(async (trx) => {
        for (const table of TENANT_TABLES) {
          const [column, key] = OWNER_COLUMN[table] as [string, keyof Seeded];
          const col = sql.ref(column);
          const set = sql.ref(UPDATE_COLUMN[table] ?? column);
          for (const owner of [seeded.B, seeded.L]) {
            const updated =
              await sql`UPDATE ${sql.table(table)} SET ${set} = ${set} WHERE ${col} = ${owner[key]}`.execute(
                trx,
              );
            expect(Number(updated.numAffectedRows ?? 0), `UPDATE ${table}`).toBe(0);
            const deleted = await sql`DELETE FROM ${sql.table(table)} WHERE ${col} = ${owner[key]}`.execute(
              trx,
            );
            expect(Number(deleted.numAffectedRows ?? 0), `DELETE ${table}`).toBe(0);
          }
          // The same statement reaches A's own row: the 0 above is the policy, not the statement.
          const own =
            await sql`UPDATE ${sql.table(table)} SET ${set} = ${set} WHERE ${col} = ${seeded.A[key]}`.execute(
              trx,
            );
          expect(Number(own.numAffectedRows ?? 0), `UPDATE own ${table}`).toBe(1);
        }
      }),
    );
    expect(await rowsOfTenant(database.db, seeded.B)).toEqual(before);
    expect(await rowsOfTenant(database.db, seeded.L)).toEqual(lenderBefore);
  });

  it("a retailer cannot write a row of another tenant's (WITH CHECK)", async () => {
    const before = await rowsOfTenant(database.db, seeded.B);
    const attempts = [
      sql`INSERT INTO users (email, password_hash, userlevel, retailer_phone)
          VALUES ('rls-intruder@lendlock.com', 'x', 'ADMIN', ${PHONE_B})`,
      sql`INSERT INTO users (email, password_hash, userlevel, retailer_phone)
          VALUES ('rls-lender@lendlock.com', 'x', 'SUPERADMIN', NULL)`,
      sql`INSERT INTO commands (transaction_id, imei1, command, kind, interface, user_label)
          VALUES ('tx-intruder', ${seeded.B.imei}, 'UNLOCK', 'state', 'S', 'intruder')`,
      sql`INSERT INTO api_keys (key_name, key_hash, user_id) VALUES ('intruder', 'kh-intruder', ${seeded.B.user})`,
      sql`INSERT INTO loan_payments (loan_id, payment_ref, amount_minor, paid_at)
          VALUES (${seeded.B.loan}, 'pay-intruder', 10, now())`,
      sql`INSERT INTO webhook_deliveries (endpoint_id, message_id, event, payload, give_up_at)
          VALUES (${seeded.B.endpoint}, 'msg-intruder', 'command.completed', '{}'::jsonb, now())`,
      sql`INSERT INTO batch_items (batch_id, seq, imei) VALUES (${seeded.B.batch}, 2, ${seeded.B.imei})`,
      // Moving one's own row to another tenant is refused too.
      sql`UPDATE devices SET retailer_phone = ${PHONE_B} WHERE imei1 = ${seeded.A.imei}`,
      sql`UPDATE commands SET imei1 = ${seeded.B.imei} WHERE imei1 = ${seeded.A.imei}`,
      sql`INSERT INTO registrations (imei1, match_status, registration_status, retailer_phone)
          VALUES (${seeded.B.imei}, 'YES', 'REGISTERED', ${PHONE_B})`,
      sql`INSERT INTO releases (imei1, released_by) VALUES (${seeded.B.imei}, 'intruder')`,
    ];
    for (const attempt of attempts)
      await expect(
        withTenant(PHONE_A, () => database.db.transaction().execute((trx) => attempt.execute(trx))),
      ).rejects.toThrow(/row-level security/);
    expect(await rowsOfTenant(database.db, seeded.B)).toEqual(before);
    expect(await asSystem(() => rowsOf(database.db, 'devices', seeded.A))).toHaveLength(1);
  });

  it('a connection that never set its tenant sees nothing', async () => {
    if (kind === 'postgres') {
      const url = database.location.databaseUrl as string;
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        // The tests connect as a superuser; the server's connections take the role subject to RLS.
        await client.query(`SET ROLE ${TENANT_ROLE}`);
        for (const table of TENANT_TABLES) {
          const result = await client.query(`SELECT count(*)::int AS n FROM ${table}`);
          expect(result.rows[0].n, table).toBe(0);
        }
      } finally {
        await client.end();
      }
    } else {
      // PGlite has one backend, which the app set already: back to the setting's default for a transaction.
      await database.db.transaction().execute(async (trx) => {
        await sql`SET LOCAL lendlock.tenant TO DEFAULT`.execute(trx);
        for (const table of TENANT_TABLES) {
          const n = await one<{ n: number }>(trx, sql`SELECT count(*)::int AS n FROM ${sql.table(table)}`);
          expect(n.n, table).toBe(0);
        }
      });
    }
    // The app's connections are unaffected.
    expect(await rowsOf(database.db, 'devices')).toHaveLength(3);
  });

  it("shared work woken from a retailer's request reaches every tenant's rows", async () => {
    const seen: string[][] = [];
    const poller = new Poller(async () => {
      seen.push(await rowsOf(database.db, 'webhook_deliveries'));
    }, 60_000);
    await withTenant(PHONE_A, async () => {
      expect(currentTenant()).toBe(PHONE_A);
      poller.wake();
      await poller.runOnce();
    });
    await poller.stop();
    expect(seen.at(-1)).toEqual(await rowsOf(database.db, 'webhook_deliveries'));
    expect(seen.at(-1)).toHaveLength(3);
  });

  it("a webhook event in a retailer's transaction reaches the lender's endpoint too", async () => {
    const lenderDeliveries = () => asSystem(() => rowsOf(database.db, 'webhook_deliveries', seeded.L));
    const before = (await lenderDeliveries()).length;
    const devicesOfA = await rowsOf(database.db, 'devices', seeded.A);
    await withTenant(PHONE_A, () =>
      database.db.transaction().execute(async (trx) => {
        const written = await asSystemWithin(trx, (d) =>
          emitEvents(d, [{ type: 'command.executed', imei1: seeded.A.imei, data: {} }], 60_000),
        );
        // A's endpoint and the lender's (B's endpoint takes only B's devices' events).
        expect(written).toBe(2);
        // The rest of the transaction is A's again.
        expect(await rowsOf(trx, 'devices')).toEqual(devicesOfA);
      }),
    );
    expect(await lenderDeliveries()).toHaveLength(before + 1);
  });

  describe('over HTTP', () => {
    let app: FastifyInstance;
    let probe: FastifyInstance;

    beforeAll(async () => {
      app = await buildTestApp(database);
      // A route that forgot its retailer filter: every device it can read.
      probe = Fastify({ logger: false });
      registerErrorHandling(probe);
      registerAuth(probe, new SessionAuthenticator({ db: database.db, idleTimeoutMs: 30 * 60_000 }), {
        'GET /probe/devices': admin(),
      });
      probe.get('/probe/devices', async () => ({
        imeis: (await database.db.selectFrom('devices').select('imei1').orderBy('imei1').execute()).map(
          (d) => d.imei1,
        ),
      }));
      await probe.ready();
    });
    afterAll(async () => {
      await probe?.close();
      await app?.close();
    });

    it("a retailer ADMIN's request reads its own rows only, even through a route with no filter", async () => {
      const retailer = await buildUser(database, { userlevel: 'ADMIN', retailerPhone: PHONE_A });
      const lender = await buildUser(database, { userlevel: 'ADMIN' });
      const asRetailer = await loginAs(app, retailer);
      const asLender = await loginAs(app, lender);
      const read = (token: string) =>
        probe.inject({ method: 'GET', url: '/probe/devices', headers: { 'x-api-key': token } });
      const retailerResponse = await read(asRetailer.token);
      expect(retailerResponse.statusCode).toBe(200);
      expect(retailerResponse.json()).toEqual({ imeis: [seeded.A.imei] });
      const lenderResponse = await read(asLender.token);
      expect(lenderResponse.json()).toEqual({
        imeis: [seeded.A.imei, seeded.B.imei, seeded.L.imei].sort(),
      });
      // Signing in (a public route) and authenticating ran as the system: the retailer's user was found.
      const anonymous = await read('not-a-token-at-all-but-long-enough');
      expect(anonymous.statusCode).toBe(401);
    });
  });
});
