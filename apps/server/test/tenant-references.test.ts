/**
 * References belong to their tenant (docs/tenancy.md, docs/features.md § Loans and payments), on
 * PGlite and PostgreSQL, with every request's authorization decided (`authorizationCheck: 'enforce'`):
 * a `loan_ref` or `payment_ref` claimed by a retailer blocks neither the lender nor another retailer, and
 * tells nobody that it exists; a lender-wide look-up of a ref that two tenants use answers 409 asking for
 * the tenant, never picks one; a duplicate in the same tenant is refused as before; and a retailer's
 * ADMIN or SUPERADMIN changes neither the collections policy nor the kill switch.
 */
import {
  COLLECTIONS_MESSAGES,
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  dayInTimeZone,
  LOAN_MESSAGES,
  type Session,
} from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { databaseKinds, fingerprint, openTestDatabase, type TestDatabase } from './db';
import { buildTestApp, buildUser, loginAs } from './factories';

const RETAILER_A = '9511111111';
const RETAILER_B = '9522222222';
const BANK_REF = 'BANK-TXN-20261127-0002';
let counter = 0;

describe.each(databaseKinds())('references per tenant on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let lender: Session;
  let lenderSuper: Session;
  let retailerA: Session;
  let retailerASuper: Session;
  let retailerB: Session;
  const today = dayInTimeZone('UTC') as string;

  /** A registered device of a retailer, or the lender's own (null). */
  const device = async (retailer: string | null) => {
    counter++;
    const imei1 = String(356938037000000 + (kind === 'postgres' ? 500000 : 0) + counter * 2);
    await database.db
      .insertInto('devices')
      .values({ imei1, imei2: null, retailer_phone: retailer, match_status: 'YES' })
      .execute();
    return imei1;
  };

  const call = (token: string, url: string, payload: object, method: 'POST' | 'PUT' = 'POST') =>
    app.inject({ method, url, headers: { 'x-api-key': token }, payload });

  /** One loan of one instalment of INR 1,499.00, due 10 days ago. */
  const loan = (loanRef: string, imei: string, amount = '1499.00') => ({
    loanRef,
    imei,
    customerName: 'Asha Rao',
    currency: 'INR',
    instalments: [{ dueDate: dayInTimeZone('UTC', new Date(Date.now() - 10 * 86_400_000)), amount }],
  });
  const importLoans = (token: string, loans: object[]) => call(token, '/api/v2/loans', { loans });
  const pay = (token: string, loanRef: string, paymentRef: string, amount = '1499.00', extra: object = {}) =>
    call(token, '/api/v2/payments', { paymentRef, loanRef, amount, paidAt: today, ...extra });

  const state = () => fingerprint(database.db, ['loans', 'loan_instalments', 'loan_payments']);
  const paymentsOf = (paymentRef: string) =>
    database.db
      .selectFrom('loan_payments as p')
      .innerJoin('loans as l', 'l.id', 'p.loan_id')
      .select(['l.loan_ref', 'p.retailer_phone', 'p.amount_minor'])
      .where('p.payment_ref', '=', paymentRef)
      .orderBy('p.id')
      .execute();

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database, { authorizationCheck: 'enforce' });
    const login = async (userlevel: 'ADMIN' | 'SUPERADMIN', retailerPhone?: string) =>
      loginAs(app, await buildUser(database, { userlevel, ...(retailerPhone ? { retailerPhone } : {}) }));
    lender = await login('ADMIN');
    lenderSuper = await login('SUPERADMIN');
    retailerA = await login('ADMIN', RETAILER_A);
    retailerASuper = await login('SUPERADMIN', RETAILER_A);
    retailerB = await login('ADMIN', RETAILER_B);
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it('a retailer’s payment_ref does not refuse the lender’s payment: it is recorded and the customer paid', async () => {
    expect((await importLoans(retailerA.token, [loan('RA-1', await device(RETAILER_A))])).statusCode).toBe(
      200,
    );
    expect((await importLoans(lender.token, [loan('LN-1', await device(null))])).statusCode).toBe(200);
    const retailers = await pay(retailerA.token, 'RA-1', BANK_REF);
    expect(retailers.statusCode, retailers.body).toBe(200);

    const lenders = await pay(lender.token, 'LN-1', BANK_REF);
    expect(lenders.statusCode, lenders.body).toBe(200);
    expect(lenders.json()).toMatchObject({
      message: LOAN_MESSAGES.paymentRecorded,
      duplicate: false,
      loan: { loanRef: 'LN-1', retailerPhone: null, status: 'PAID' },
    });
    expect(await paymentsOf(BANK_REF)).toEqual([
      { loan_ref: 'RA-1', retailer_phone: RETAILER_A, amount_minor: expect.anything() },
      { loan_ref: 'LN-1', retailer_phone: null, amount_minor: expect.anything() },
    ]);
    // The same payment again, in the lender's own tenant: recorded once, as before.
    const again = await pay(lender.token, 'LN-1', BANK_REF);
    expect(again.json()).toMatchObject({ message: LOAN_MESSAGES.paymentDuplicate, duplicate: true });
    expect(await paymentsOf(BANK_REF)).toHaveLength(2);
  });

  it('a retailer’s claimed loan_ref does not fail the lender’s import', async () => {
    const claimed = await importLoans(retailerA.token, [loan('LN-CLAIM', await device(RETAILER_A))]);
    expect(claimed.json()).toMatchObject({ created: 1 });
    const imported = await importLoans(lender.token, [
      loan('LN-CLAIM', await device(null)),
      loan('LN-NEXT', await device(null)),
    ]);
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json()).toMatchObject({ created: 2, replaced: 0, unchanged: 0 });
    const rows = await database.db
      .selectFrom('loans')
      .select(['retailer_phone'])
      .where('loan_ref', '=', 'LN-CLAIM')
      .orderBy('id')
      .execute();
    expect(rows.map((r) => r.retailer_phone)).toEqual([RETAILER_A, null]);
  });

  it('another tenant’s refs are unused for a retailer; probing them answers as an unknown ref does', async () => {
    await importLoans(retailerB.token, [loan('RB-ONLY', await device(RETAILER_B))]);
    expect((await pay(retailerB.token, 'RB-ONLY', 'PB-ONLY')).statusCode).toBe(200);
    await importLoans(lender.token, [loan('LN-ONLY', await device(null))]);
    expect((await pay(lender.token, 'LN-ONLY', 'PL-ONLY')).statusCode).toBe(200);
    const reversed = { paymentRef: 'PL-ONLY', reason: 'chargeback' };

    // Probing: another tenant's ref answers exactly as an unknown one, and changes nothing.
    const before = await state();
    const probes: [string, object, object][] = [
      ['/api/v2/loans/get', { loanRef: 'LN-ONLY' }, { loanRef: 'L-NOBODY' }],
      ['/api/v2/loans/get', { loanRef: 'RB-ONLY' }, { loanRef: 'L-NOBODY' }],
      ['/api/v2/loans/get', { loanRef: 'RB-ONLY', retailerPhone: RETAILER_B }, { loanRef: 'L-NOBODY' }],
      ['/api/v2/loans/get', { loanRef: 'LN-ONLY', retailerPhone: null }, { loanRef: 'L-NOBODY' }],
      ['/api/v2/loans/promise', { loanRef: 'RB-ONLY', until: today }, { loanRef: 'L-NOBODY', until: today }],
      [
        '/api/v2/payments',
        { paymentRef: 'P-PROBE', loanRef: 'RB-ONLY', amount: '1', paidAt: today },
        { paymentRef: 'P-PROBE', loanRef: 'L-NOBODY', amount: '1', paidAt: today },
      ],
      ['/api/v2/payments/reverse', reversed, { ...reversed, paymentRef: 'P-NOBODY' }],
      [
        '/api/v2/payments/reverse',
        { paymentRef: 'PB-ONLY', reason: 'chargeback' },
        { paymentRef: 'P-NOBODY', reason: 'chargeback' },
      ],
    ];
    for (const [url, body, unknownBody] of probes) {
      const probe = await call(retailerA.token, url, body);
      const unknown = await call(retailerA.token, url, unknownBody);
      expect(probe.statusCode, `${url} ${JSON.stringify(body)}`).toBe(404);
      expect(probe.json(), url).toEqual(unknown.json());
    }
    expect(await state()).toBe(before);

    // Used: the same refs are new for retailer A (no 409), recorded in its own tenant.
    const imported = await importLoans(retailerA.token, [
      loan('RB-ONLY', await device(RETAILER_A)),
      loan('LN-ONLY', await device(RETAILER_A)),
    ]);
    expect(imported.statusCode, imported.body).toBe(200);
    expect(imported.json()).toMatchObject({ created: 2 });
    for (const paymentRef of ['PB-ONLY', 'PL-ONLY']) {
      const paid = await pay(retailerA.token, 'RB-ONLY', paymentRef, '10.00');
      expect(paid.statusCode, paid.body).toBe(200);
      expect(paid.json()).toMatchObject({ duplicate: false, loan: { retailerPhone: RETAILER_A } });
    }
    // B's and the lender's are untouched by A's.
    expect((await paymentsOf('PB-ONLY')).map((p) => p.retailer_phone)).toEqual([RETAILER_B, RETAILER_A]);
    const lenders = await call(lender.token, '/api/v2/loans/get', {
      loanRef: 'LN-ONLY',
      retailerPhone: null,
    });
    expect(lenders.json().loan).toMatchObject({ retailerPhone: null, status: 'PAID' });
  });

  it('a lender-wide look-up of a ref two tenants use answers 409 asking for the tenant, and never picks one', async () => {
    const ofA = await device(RETAILER_A);
    const ofLender = await device(null);
    await importLoans(retailerA.token, [loan('LN-TWICE', ofA)]);
    await importLoans(lender.token, [loan('LN-TWICE', ofLender)]);
    expect((await pay(retailerA.token, 'LN-TWICE', 'P-TWICE', '100.00')).statusCode).toBe(200);
    expect(
      (await pay(lender.token, 'LN-TWICE', 'P-TWICE', '100.00', { retailerPhone: null })).statusCode,
    ).toBe(200);

    const before = await state();
    const ambiguous: [string, object, string][] = [
      ['/api/v2/loans/get', { loanRef: 'LN-TWICE' }, LOAN_MESSAGES.loanRefAmbiguous],
      ['/api/v2/loans/promise', { loanRef: 'LN-TWICE', until: today }, LOAN_MESSAGES.loanRefAmbiguous],
      [
        '/api/v2/payments',
        { paymentRef: 'P-NEW', loanRef: 'LN-TWICE', amount: '1', paidAt: today },
        LOAN_MESSAGES.loanRefAmbiguous,
      ],
      [
        '/api/v2/payments/reverse',
        { paymentRef: 'P-TWICE', reason: 'bounced' },
        LOAN_MESSAGES.paymentRefAmbiguous,
      ],
    ];
    for (const [url, body, message] of ambiguous) {
      const response = await call(lender.token, url, body);
      expect([response.statusCode, response.json().message], url).toEqual([409, message]);
    }
    expect(await state()).toBe(before);

    // Naming the tenant (or the IMEI) answers the one meant.
    const namedA = await call(lender.token, '/api/v2/loans/get', {
      loanRef: 'LN-TWICE',
      retailerPhone: RETAILER_A,
    });
    expect(namedA.json().loan).toMatchObject({ imei: ofA, retailerPhone: RETAILER_A });
    const own = await call(lender.token, '/api/v2/loans/get', { loanRef: 'LN-TWICE', retailerPhone: null });
    expect(own.json().loan).toMatchObject({ imei: ofLender, retailerPhone: null });
    const byImei = await call(lender.token, '/api/v2/loans/get', { imei: ofA });
    expect(byImei.json().loan).toMatchObject({ loanRef: 'LN-TWICE', retailerPhone: RETAILER_A });
    const reverse = await call(lender.token, '/api/v2/payments/reverse', {
      paymentRef: 'P-TWICE',
      reason: 'bounced',
      retailerPhone: RETAILER_A,
    });
    expect(reverse.statusCode, reverse.body).toBe(200);
    expect(reverse.json().loan).toMatchObject({ imei: ofA, retailerPhone: RETAILER_A });
    const reversedRows = await database.db
      .selectFrom('loan_payments')
      .select(['retailer_phone', 'reversed_at'])
      .where('payment_ref', '=', 'P-TWICE')
      .orderBy('id')
      .execute();
    expect(reversedRows.map((r) => [r.retailer_phone, r.reversed_at !== null])).toEqual([
      [RETAILER_A, true],
      [null, false],
    ]);
    // The retailer's own look-up is never ambiguous: its own tenant's.
    const retailers = await call(retailerA.token, '/api/v2/loans/get', { loanRef: 'LN-TWICE' });
    expect(retailers.json().loan).toMatchObject({ imei: ofA });
  });

  it('a duplicate in the same tenant is refused with today’s message, changing nothing', async () => {
    const ofA = await device(RETAILER_A);
    await importLoans(retailerA.token, [loan('RA-DUP', ofA, '5000.00')]);
    await importLoans(lender.token, [loan('LN-DUP', await device(null), '5000.00')]);
    expect((await pay(retailerA.token, 'RA-DUP', 'P-DUP', '100.00')).statusCode).toBe(200);
    expect((await pay(lender.token, 'LN-DUP', 'P-LDUP', '100.00')).statusCode).toBe(200);
    const before = await state();
    const conflicts: [Session, string, string, string][] = [
      [retailerA, 'RA-DUP', 'P-DUP', '200.00'],
      // The lender on the retailer's loan: the payment's tenant is its loan's, where P-DUP is taken.
      [lender, 'RA-DUP', 'P-DUP', '300.00'],
      [lender, 'LN-DUP', 'P-LDUP', '200.00'],
    ];
    for (const [who, loanRef, paymentRef, amount] of conflicts) {
      const response = await pay(who.token, loanRef, paymentRef, amount);
      expect([response.statusCode, response.json().message]).toEqual([409, LOAN_MESSAGES.paymentConflict]);
    }
    const changed = await importLoans(retailerA.token, [loan('RA-DUP', ofA, '6000.00')]);
    expect(changed.json().invalid).toEqual([
      { line: 1, error: LOAN_MESSAGES.scheduleDiffers, data: 'RA-DUP' },
    ]);
    expect(await state()).toBe(before);
  });

  it('a retailer’s ADMIN or SUPERADMIN changes neither the collections policy nor the kill switch', async () => {
    const tables = ['collection_policies', 'collection_control', 'collection_holds', 'collection_actions'];
    const policy: CollectionsPolicy = { ...DEFAULT_COLLECTIONS_POLICY, enabled: true };
    const before = await fingerprint(database.db, tables);
    for (const who of [retailerA, retailerASuper]) {
      const saved = await call(who.token, '/api/v2/collections/policy', { policy }, 'PUT');
      expect([saved.statusCode, saved.json().message]).toEqual([403, COLLECTIONS_MESSAGES.policyRetailer]);
      for (const on of [true, false]) {
        const stopped = await call(who.token, '/api/v2/collections/kill-switch', { on, reason: 'x' }, 'PUT');
        expect([stopped.statusCode, stopped.json().message]).toEqual([
          403,
          COLLECTIONS_MESSAGES.killSwitchRetailer,
        ]);
      }
    }
    expect(await fingerprint(database.db, tables)).toBe(before);
    // The lender's SUPERADMIN still does.
    const saved = await call(lenderSuper.token, '/api/v2/collections/policy', { policy }, 'PUT');
    expect(saved.statusCode, saved.body).toBe(200);
  });

  it('shows a retailer the policy’s exclusions of its own retailer and devices only', async () => {
    const [ofA, ofB, ofLender] = [await device(RETAILER_A), await device(RETAILER_B), await device(null)];
    const policy: CollectionsPolicy = {
      ...DEFAULT_COLLECTIONS_POLICY,
      excludedImeis: [ofA, ofB, ofLender],
      excludedRetailers: [RETAILER_A, RETAILER_B],
    };
    const saved = await call(lenderSuper.token, '/api/v2/collections/policy', { policy }, 'PUT');
    expect(saved.statusCode, saved.body).toBe(200);
    const read = (token: string, url: string) =>
      app.inject({ method: 'GET', url, headers: { 'x-api-key': token } });
    const shown = (await read(retailerA.token, '/api/v2/collections/policy')).json().policy;
    expect([shown.excludedImeis, shown.excludedRetailers]).toEqual([[ofA], [RETAILER_A]]);
    const versions = (await read(retailerA.token, '/api/v2/collections/policy/versions')).json().items;
    expect(JSON.stringify(versions)).not.toMatch(new RegExp(`${ofB}|${ofLender}|${RETAILER_B}`));
    // The lender sees every exclusion.
    const full = (await read(lender.token, '/api/v2/collections/policy')).json().policy;
    expect([full.excludedImeis, full.excludedRetailers]).toEqual([
      [ofA, ofB, ofLender],
      [RETAILER_A, RETAILER_B],
    ]);
  });

  it('another tenant’s hold is not found, as an unknown device’s, and stays', async () => {
    const ofB = await device(RETAILER_B);
    const held = await call(
      retailerB.token,
      `/api/v2/collections/holds/${ofB}`,
      { reason: 'dispute' },
      'PUT',
    );
    expect(held.statusCode, held.body).toBe(200);
    const before = await fingerprint(database.db, ['collection_holds']);
    for (const method of ['PUT', 'DELETE'] as const) {
      const foreign = await app.inject({
        method,
        url: `/api/v2/collections/holds/${ofB}`,
        headers: { 'x-api-key': retailerA.token },
        ...(method === 'PUT' ? { payload: { reason: 'mine now' } } : {}),
      });
      expect([foreign.statusCode, foreign.json().message]).toEqual([
        404,
        COLLECTIONS_MESSAGES.deviceNotFound,
      ]);
    }
    const list = await app.inject({
      method: 'GET',
      url: `/api/v2/collections/holds?imei=${ofB}`,
      headers: { 'x-api-key': retailerA.token },
    });
    expect(list.json().items).toEqual([]);
    expect(await fingerprint(database.db, ['collection_holds'])).toBe(before);
  });
});
