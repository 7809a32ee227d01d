/**
 * Sign-in that cannot be abused (ADR 0008), each attack reproduced and refused: guesses sent all at once
 * (to one instance or several) are at most the limit checked; a flood of wrong passwords from many
 * addresses does not lock the owner out of the networks it signs in from; device enrollment's limits are
 * as atomic.
 */
import { ENROLLMENT_SECRET_HEADER, MESSAGES } from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REGISTRATION_MESSAGES } from '../src/modules/enrollment/service';
import { databaseKinds, openTestDatabase, type TestDatabase } from './db';
import { TEST_ENROLLMENT_SECRET } from './devices';
import { buildTestApp, buildUser, type TestUser } from './factories';

describe.each(databaseKinds())('sign-in throttling on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let other: FastifyInstance;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    // The defaults: 5 failures per account and address, 30 per address, 50 per account, 15 minutes.
    app = await buildTestApp(database);
    // A second instance on the same database.
    other = await buildTestApp(database);
  });
  afterAll(async () => {
    await other?.close();
    await app?.close();
    await database?.close();
  });

  const signIn = (user: Pick<TestUser, 'email'>, password: string, remoteAddress: string, on = app) =>
    on.inject({
      method: 'POST',
      url: '/api/login.php',
      remoteAddress,
      payload: { email: user.email, password },
    });
  const statuses = (responses: { statusCode: number }[]) => responses.map((r) => r.statusCode).sort();
  const audited = async (email: string, result: string) =>
    (
      await database.db
        .selectFrom('audit_log')
        .select('id')
        .where('actor', '=', email)
        .where('action', '=', 'login')
        .where('result', '=', result)
        .execute()
    ).length;

  it('checks at most 5 of 40 wrong passwords sent at once for one account from one address', async () => {
    const victim = await buildUser(database);
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(victim, `guess-${i}`, '203.0.113.50')),
    );
    expect(statuses(burst)).toEqual([...Array(5).fill(401), ...Array(35).fill(429)]);
    const refused = burst.find((r) => r.statusCode === 429);
    expect(refused?.json()).toMatchObject({ code: 'RATE_LIMITED', message: MESSAGES.loginThrottled(15) });
    // Five passwords were checked, five failures are counted: the refused 35 left no trace in the count.
    expect(await audited(victim.email, 'invalid credentials')).toBe(5);
    expect(await audited(victim.email, 'throttled')).toBe(35);
    const counted = await database.db
      .selectFrom('login_throttle')
      .select('failures')
      .where('key', '=', `acct-addr:user:${victim.id}|203.0.113.50`)
      .executeTakeFirstOrThrow();
    expect(counted.failures).toBe(5);
    // Even the right password is refused from that address now.
    expect((await signIn(victim, victim.password, '203.0.113.50')).statusCode).toBe(429);
  });

  it('holds the limit across instances: 40 guesses split over two instances are 5 checked', async () => {
    const victim = await buildUser(database);
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => signIn(victim, `guess-${i}`, '203.0.113.51', i % 2 ? other : app)),
    );
    expect(statuses(burst).filter((s) => s === 401)).toHaveLength(5);
    expect(statuses(burst).filter((s) => s === 429)).toHaveLength(35);
  });

  it('checks at most 30 guesses at once from one address spraying many accounts', async () => {
    // 12 accounts × 5 would be 60 guesses under the per-account limit: the address's 30 stops them.
    const users = await Promise.all(Array.from({ length: 12 }, () => buildUser(database)));
    const burst = await Promise.all(
      Array.from({ length: 60 }, (_, i) => signIn(users[i % 12] as TestUser, `spray-${i}`, '203.0.113.52')),
    );
    expect(statuses(burst).filter((s) => s === 401)).toHaveLength(30);
    expect(statuses(burst).filter((s) => s === 429)).toHaveLength(30);
    // A refused attempt leaves no trace: another account tried from the blocked address has no count.
    const fresh = await buildUser(database);
    expect((await signIn(fresh, 'spray', '203.0.113.52')).statusCode).toBe(429);
    const traces = await database.db
      .selectFrom('login_throttle')
      .select('key')
      .where('key', 'like', `%user:${fresh.id}%`)
      .execute();
    expect(traces).toEqual([]);
  });

  it('a flood from 10 addresses does not lock the owner out of a network it signed in from', async () => {
    const owner = await buildUser(database);
    // The owner signed in from the office before: 198.51.100.0/24 is a known network.
    expect((await signIn(owner, owner.password, '198.51.100.7')).statusCode).toBe(200);

    // The attacker knows the email: 5 wrong passwords from each of 10 addresses, the account-wide 50.
    for (let a = 1; a <= 10; a++) {
      for (let i = 0; i < 5; i++) {
        expect((await signIn(owner, `guess-${a}-${i}`, `203.0.113.${a}`)).statusCode).toBe(401);
      }
    }
    // An unknown address is blocked account-wide, right password or not, as before.
    const unknown = await signIn(owner, owner.password, '192.0.2.77');
    expect(unknown.statusCode).toBe(429);
    expect(unknown.json().message).toBe(MESSAGES.loginThrottled(15));
    // The owner signs in from the known address, and from another address of the same network.
    expect((await signIn(owner, owner.password, '198.51.100.7')).statusCode).toBe(200);
    expect((await signIn(owner, owner.password, '198.51.100.99')).statusCode).toBe(200);
    // The attacker's own addresses stay blocked by their per-address limit.
    expect((await signIn(owner, owner.password, '203.0.113.3')).statusCode).toBe(429);
    // Sign-ins of another account from the attacker's addresses are not affected.
    const bystander = await buildUser(database);
    expect((await signIn(bystander, bystander.password, '192.0.2.77')).statusCode).toBe(200);
  });

  it('a known network keeps its own limits: 5 per address, 50 over the network', async () => {
    const owner = await buildUser(database);
    expect((await signIn(owner, owner.password, '198.51.101.7')).statusCode).toBe(200);
    // Guessing from inside the known network: the address's own limit holds.
    for (let i = 0; i < 5; i++) {
      expect((await signIn(owner, `guess-${i}`, '198.51.101.7')).statusCode).toBe(401);
    }
    expect((await signIn(owner, owner.password, '198.51.101.7')).statusCode).toBe(429);
    // 45 more from 9 other addresses of that network: the network's bucket (50) is full.
    for (let a = 10; a < 19; a++) {
      for (let i = 0; i < 5; i++) await signIn(owner, `guess-${a}-${i}`, `198.51.101.${a}`);
    }
    expect((await signIn(owner, owner.password, '198.51.101.200')).statusCode).toBe(429);
    // Which the rest of the world does not share: an unknown address still signs in.
    expect((await signIn(owner, owner.password, '192.0.2.78')).statusCode).toBe(200);
  });

  it('remembers an IPv6 owner by its /64 and an IPv4-mapped address as IPv4', async () => {
    const owner = await buildUser(database);
    expect((await signIn(owner, owner.password, '2001:db8:1:2::10')).statusCode).toBe(200);
    expect((await signIn(owner, owner.password, '::ffff:198.51.102.5')).statusCode).toBe(200);
    for (let a = 1; a <= 10; a++) {
      for (let i = 0; i < 5; i++) await signIn(owner, `guess-${a}-${i}`, `2001:db8:ff:${a}::1`);
    }
    expect((await signIn(owner, owner.password, '2001:db8:ff:99::1')).statusCode).toBe(429);
    expect((await signIn(owner, owner.password, '2001:db8:1:2:ffff::1')).statusCode).toBe(200);
    expect((await signIn(owner, owner.password, '198.51.102.200')).statusCode).toBe(200);
    // What is stored: hashes, never the address or the network.
    const rows = await database.db
      .selectFrom('login_known_networks')
      .select('network_hash')
      .where('user_id', '=', owner.id)
      .execute();
    expect(rows).toHaveLength(2);
    for (const row of rows) expect(row.network_hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('a failed sign-in remembers nothing; an unknown account has no known networks', async () => {
    const owner = await buildUser(database);
    await signIn(owner, 'wrong', '198.51.103.1');
    await signIn({ email: 'nobody@lendlock.com' }, 'wrong', '198.51.103.1');
    const rows = await database.db
      .selectFrom('login_known_networks')
      .select('user_id')
      .where('user_id', 'in', [owner.id, 0])
      .execute();
    expect(rows).toEqual([]);
  });
});

describe.each(databaseKinds())('device enrollment throttling on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let roomy: FastifyInstance;

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, {
      enrollmentSecret: TEST_ENROLLMENT_SECRET,
      loginMaxFailuresPerAddress: 5,
      registrationMaxPerAddress: 3,
    });
    // Right secrets in flight are counted as possible failures until checked (a few milliseconds): a
    // burst of right ones needs a wrong-secret allowance at least as large as the burst.
    roomy = await buildTestApp(database, {
      enrollmentSecret: TEST_ENROLLMENT_SECRET,
      loginMaxFailuresPerAddress: 100,
      registrationMaxPerAddress: 3,
    });
  });
  afterAll(async () => {
    await roomy?.close();
    await app?.close();
    await database?.close();
  });

  const nonce = (secret: string, remoteAddress: string, i: number, on = app) =>
    on.inject({
      method: 'POST',
      url: '/device/v1/nonce',
      remoteAddress,
      headers: { [ENROLLMENT_SECRET_HEADER]: secret },
      payload: { imei1: `35693803564${String(1000 + i).slice(-4)}` },
    });

  it('checks at most 5 of 40 wrong enrollment secrets sent at once from one address', async () => {
    const burst = await Promise.all(
      Array.from({ length: 40 }, (_, i) => nonce(`wrong-secret-${i}-wrong-secret`, '203.0.113.60', i)),
    );
    expect(burst.filter((r) => r.statusCode === 401)).toHaveLength(5);
    const refused = burst.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(35);
    expect(refused[0]?.json().message).toBe(REGISTRATION_MESSAGES.throttled(15));
    // The right secret is refused too from that address now, and answered the same.
    const right = await nonce(TEST_ENROLLMENT_SECRET, '203.0.113.60', 99);
    expect(right.statusCode).toBe(429);
    expect(right.json().message).toBe(REGISTRATION_MESSAGES.throttled(15));
  });

  it('admits at most REGISTRATION_MAX_PER_ADDRESS calls with a right secret sent at once', async () => {
    const burst = await Promise.all(
      Array.from({ length: 20 }, (_, i) => nonce(TEST_ENROLLMENT_SECRET, '203.0.113.61', i, roomy)),
    );
    expect(burst.filter((r) => r.statusCode === 200)).toHaveLength(3);
    const refused = burst.filter((r) => r.statusCode === 429);
    expect(refused).toHaveLength(17);
    expect(refused[0]?.json().message).toBe(REGISTRATION_MESSAGES.tooMany(15));
    // Right secrets are not failures: the address's wrong-secret count is untouched.
    const failures = await database.db
      .selectFrom('login_throttle')
      .select('failures')
      .where('key', '=', 'enroll-addr:203.0.113.61')
      .executeTakeFirst();
    expect(failures?.failures ?? 0).toBe(0);
  });
});
