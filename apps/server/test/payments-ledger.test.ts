/**
 * Payments as a ledger (docs/features.md § Loans and payments, § Collections on autopilot), through
 * the API on PGlite and PostgreSQL:
 * - "a payment in the last 24 hours" counts from when the customer paid (`paidAt`), not when the payment
 *   was recorded: an old payment imported today does not skip a lock, nor does one dated in the future;
 * - a payment suspends the lock only when the window's payments cover the policy's minimum (an amount, or
 *   a share of what was overdue): ₹1 a day does not avoid the lock;
 * - a payment is reversed by its ref (ADMIN, with a reason, audited, once, scoped to the retailer): it no
 *   longer counts in the paid amounts, the arrears or the recent payment, and the loan is judged again.
 */
import {
  addDays,
  COLLECTIONS_MESSAGES,
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  DEFAULT_LOCK_PAUSE,
  dayInTimeZone,
  LOAN_MESSAGES,
  type LoanView,
  type PlanItem,
  type Session,
} from '@lendlock/contract';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  apiCaller,
  collectionsAppSuite,
  importLoans,
  requestPlan,
  savePolicy,
  signedIn,
  testEngine,
} from './collections';
import { databaseKinds, fingerprint } from './db';
import { registerProfile } from './devices';
import { buildUser, loginAs } from './factories';

const ZONE = 'Asia/Kolkata';
const RETAILER = '9000000011';
const OTHER_RETAILER = '9000000012';
const LEDGER_TABLES = ['loans', 'loan_instalments', 'loan_payments', 'audit_log'];
/** Locks after 5 days overdue, and any payment suspends the lock (the minimum is set per test). */
const POLICY: CollectionsPolicy = {
  ...DEFAULT_COLLECTIONS_POLICY,
  enabled: true,
  timeZone: ZONE,
  lockAfterDaysOverdue: 5,
  quietHours: null,
};

describe.each(databaseKinds())('payments as a ledger on %s', (kind) => {
  const suite = collectionsAppSuite(kind);
  let retailerAdmin: Session;
  let retailerEmail: string;
  let otherRetailerAdmin: Session;
  let counter = 0;
  const today = () => dayInTimeZone(ZONE) as string;
  const day = (n: number) => addDays(today(), n);

  const api = apiCaller(() => suite.app);
  const call = (token: string, url: string, payload: object) => api(token, 'POST', url, payload);

  /** A loan of 1,000 per instalment on a new enrolled device of `retailer`, its first due `first` days from today. */
  const newLoan = async (retailer: string | null, first: number, count = 3) => {
    counter++;
    const imei = (await registerProfile(suite.app, retailer ? { retailer_phone: retailer } : {})).profile
      .imei1;
    const loanRef = `LEDGER-${kind}-${counter}`;
    await importLoans(suite.app, suite.admin.token, [
      {
        loanRef,
        imei,
        customerName: 'Asha Rao',
        currency: 'INR',
        instalments: Array.from({ length: count }, (_, i) => ({
          dueDate: day(first + i * 30),
          amount: '1000',
        })),
      },
    ]);
    return { imei, loanRef };
  };

  const pay = async (loanRef: string, paymentRef: string, amount: string, paidAt: string) => {
    const response = await call(suite.admin.token, '/api/v2/payments', {
      paymentRef,
      loanRef,
      amount,
      paidAt,
    });
    expect(response.statusCode, response.body).toBe(200);
  };

  /** The dry run's items of a loan today, with `policy`. */
  const planOf = async (loanRef: string, policy: object = POLICY): Promise<PlanItem[]> =>
    (await requestPlan(suite.app, suite.admin.token, { policy, limit: 1000 })).items.filter(
      (i: PlanItem) => i.loanRef === loanRef,
    );
  const getLoan = async (loanRef: string): Promise<LoanView> => {
    const response = await call(suite.admin.token, '/api/v2/loans/get', { loanRef, timeZone: ZONE });
    expect(response.statusCode, response.body).toBe(200);
    return response.json().loan;
  };
  const reverse = (token: string, paymentRef: string, reason: string) =>
    call(token, '/api/v2/payments/reverse', { paymentRef, reason, timeZone: ZONE });
  const ledger = () => fingerprint(suite.database.db, LEDGER_TABLES);

  const lockOf = async (loanRef: string, policy: object = POLICY) =>
    (await planOf(loanRef, policy)).find((i) => i.action === 'LOCK');

  beforeAll(async () => {
    const { app, database } = suite;
    const retailerUser = await buildUser(database, { userlevel: 'ADMIN', retailerPhone: RETAILER });
    retailerEmail = retailerUser.email;
    retailerAdmin = await loginAs(app, retailerUser);
    otherRetailerAdmin = await signedIn(app, database, { userlevel: 'ADMIN', retailerPhone: OTHER_RETAILER });
  });

  it('a payment counts from when the customer paid: one paid 41+ days ago and imported today skips no lock', async () => {
    // Instalment 1 paid the day before it fell due; instalment 2 is 41 days overdue.
    const { loanRef } = await newLoan(null, -71, 2);
    await pay(loanRef, `${loanRef}-P1`, '1000', `${day(-72)}T11:00:00+05:30`);
    const lock = await lockOf(loanRef);
    expect(lock).toMatchObject({ action: 'LOCK', daysOverdue: 41, amount: '1000.00', skipped: null });
  });

  it('a payment dated in the future does not count as recent', async () => {
    const { loanRef } = await newLoan(null, -71, 2);
    // Recorded when the lender's clock ran ahead (the API refuses such a date now): it must not count forever.
    const loan = await suite.database.db
      .selectFrom('loans')
      .select('id')
      .where('loan_ref', '=', loanRef)
      .executeTakeFirstOrThrow();
    await suite.database.db
      .insertInto('loan_payments')
      .values({
        loan_id: Number(loan.id),
        payment_ref: `${loanRef}-future`,
        amount_minor: 50_000,
        paid_at: new Date(Date.now() + 3 * 86_400_000),
        source: 'API',
        recorded_by: 'test',
      })
      .execute();
    expect(await lockOf(loanRef)).toMatchObject({ daysOverdue: 71, skipped: null });
  });

  it('a payment of ₹1 a day does not avoid the lock; one covering the policy’s minimum does', async () => {
    const { loanRef } = await newLoan(null, -71, 2);
    await pay(loanRef, `${loanRef}-P1`, '1000', `${day(-72)}T11:00:00+05:30`);
    await pay(loanRef, `${loanRef}-R1`, '1', new Date(Date.now() - 3_600_000).toISOString());
    expect(await lockOf(loanRef)).toMatchObject({ daysOverdue: 41, skipped: null });
    // The default minimum: a share of what was overdue.
    expect(DEFAULT_COLLECTIONS_POLICY.lockPause.minSharePercent).toBeGreaterThan(0);
    const byAmount = { ...POLICY, lockPause: { minAmount: '500', minSharePercent: null } };
    expect(await lockOf(loanRef, byAmount)).toMatchObject({ skipped: null });
    // No minimum: any payment suspends the lock (the behaviour before the minimum existed).
    const none = { ...POLICY, lockPause: { minAmount: null, minSharePercent: null } };
    expect(await lockOf(loanRef, none)).toMatchObject({ skipped: 'recentPayment' });

    // ₹499 more in the window: ₹500 of the ₹1,000 that was overdue.
    await pay(loanRef, `${loanRef}-R2`, '499', new Date().toISOString());
    expect(await lockOf(loanRef, byAmount)).toMatchObject({ skipped: 'recentPayment' });
    const half = { ...POLICY, lockPause: { minAmount: null, minSharePercent: 50 } };
    expect(await lockOf(loanRef, half)).toMatchObject({ skipped: 'recentPayment' });
    const more = { ...POLICY, lockPause: { minAmount: '600', minSharePercent: 60 } };
    expect(await lockOf(loanRef, more)).toMatchObject({ skipped: null, amount: '500.00' });
    // Either minimum suffices: the amount, or the share.
    const either = { ...POLICY, lockPause: { minAmount: '2000', minSharePercent: 50 } };
    expect(await lockOf(loanRef, either)).toMatchObject({ skipped: 'recentPayment' });
  });

  it('a payment is reversed by its ref: the loan is judged again without it, and the plan locks again', async () => {
    // Due 40 and 10 days ago and in 20 days: paid off, the last ₹2,000 an hour ago.
    const { loanRef, imei } = await newLoan(RETAILER, -40);
    await pay(loanRef, `${loanRef}-P1`, '1000', `${day(-41)}T10:00:00+05:30`);
    await pay(loanRef, `${loanRef}-P2`, '2000', new Date(Date.now() - 3_600_000).toISOString());
    expect((await getLoan(loanRef)).status).toBe('PAID');
    expect(await lockOf(loanRef)).toBeUndefined();

    // Refusals change nothing: another retailer's user (not found, as an unknown ref), no reason.
    const before = await ledger();
    const foreign = await reverse(otherRetailerAdmin.token, `${loanRef}-P2`, 'chargeback');
    expect(foreign.statusCode).toBe(404);
    expect(foreign.json().message).toBe(LOAN_MESSAGES.unknownPayment);
    const unknown = await reverse(suite.admin.token, `${loanRef}-nope`, 'chargeback');
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().message).toBe(LOAN_MESSAGES.unknownPayment);
    const noReason = await reverse(retailerAdmin.token, `${loanRef}-P2`, '   ');
    expect(noReason.statusCode).toBe(400);
    expect(noReason.json().message).toContain(LOAN_MESSAGES.reversalReason);
    expect(await ledger()).toBe(before);

    const reversed = await reverse(retailerAdmin.token, `${loanRef}-P2`, 'chargeback');
    expect(reversed.statusCode, reversed.body).toBe(200);
    const body = reversed.json();
    expect(body).toMatchObject({
      status: 'success',
      message: LOAN_MESSAGES.paymentReversed,
      duplicate: false,
      payment: {
        paymentRef: `${loanRef}-P2`,
        amountMinor: 200_000,
        reversedBy: retailerEmail,
        reversalReason: 'chargeback',
      },
      loan: {
        status: 'OPEN',
        summary: {
          paidMinor: 100_000,
          arrearsMinor: 100_000,
          creditMinor: 0,
          daysOverdue: 10,
          instalmentsPaid: 1,
          lastPayment: { paymentRef: `${loanRef}-P1` },
        },
      },
    });
    expect(Date.parse(body.payment.reversedAt)).not.toBeNaN();
    // The rows: the payment kept, marked reversed; the instalments as if it had never been paid.
    const loanRow = await suite.database.db
      .selectFrom('loans')
      .select(['id', 'status'])
      .where('loan_ref', '=', loanRef)
      .executeTakeFirstOrThrow();
    expect(loanRow.status).toBe('OPEN');
    const payments = await suite.database.db
      .selectFrom('loan_payments')
      .select(['payment_ref', 'reversed_by', 'reversal_reason', 'reversed_at'])
      .where('loan_id', '=', loanRow.id)
      .orderBy('id')
      .execute();
    expect(
      payments.map((p) => [p.payment_ref, p.reversed_by, p.reversal_reason, p.reversed_at !== null]),
    ).toEqual([
      [`${loanRef}-P1`, null, null, false],
      [`${loanRef}-P2`, retailerEmail, 'chargeback', true],
    ]);
    const instalments = await suite.database.db
      .selectFrom('loan_instalments')
      .select(['paid_minor', 'paid_at'])
      .where('loan_id', '=', loanRow.id)
      .orderBy('seq')
      .execute();
    expect(instalments.map((i) => [Number(i.paid_minor), i.paid_at !== null])).toEqual([
      [100_000, true],
      [0, false],
      [0, false],
    ]);
    const audit = await suite.database.db
      .selectFrom('audit_log')
      .select(['target', 'details'])
      .where('action', '=', 'loan.payment.reverse')
      .execute();
    expect(audit).toEqual([
      {
        target: imei,
        details: {
          loanRef,
          paymentRef: `${loanRef}-P2`,
          amountMinor: 200_000,
          currency: 'INR',
          paidAt: expect.any(String),
          reason: 'chargeback',
          loanReopened: true,
        },
      },
    ]);

    // Reversing it again answers so and changes nothing.
    const after = await ledger();
    const again = await reverse(suite.admin.token, `${loanRef}-P2`, 'chargeback, again');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({
      message: LOAN_MESSAGES.paymentReversedBefore,
      duplicate: true,
      payment: { reversalReason: 'chargeback' },
    });
    expect(await ledger()).toBe(after);

    // The reversed payment was paid an hour ago and covered twice the arrears: it no longer suspends the lock.
    expect(await lockOf(loanRef)).toMatchObject({ daysOverdue: 10, amount: '1000.00', skipped: null });
  });

  it('a payment reversed twice at once is reversed once', async () => {
    const { loanRef } = await newLoan(null, -40);
    await pay(loanRef, `${loanRef}-P1`, '1000', `${day(-41)}T10:00:00+05:30`);
    const replies = await Promise.all([
      reverse(suite.admin.token, `${loanRef}-P1`, 'chargeback'),
      reverse(suite.admin.token, `${loanRef}-P1`, 'chargeback'),
    ]);
    expect(replies.map((r) => r.statusCode)).toEqual([200, 200]);
    expect(replies.map((r) => r.json().duplicate).sort()).toEqual([false, true]);
    const audit = await suite.database.db
      .selectFrom('audit_log')
      .select('details')
      .where('action', '=', 'loan.payment.reverse')
      .execute();
    expect(audit.filter((a) => (a.details as { loanRef: string }).loanRef === loanRef)).toHaveLength(1);
    expect((await getLoan(loanRef)).summary).toMatchObject({ paidMinor: 0, arrearsMinor: 200_000 });
  });

  it('refuses a reversal that would open a paid loan beside its device’s new open loan, changing nothing', async () => {
    const { loanRef, imei } = await newLoan(null, -40, 1);
    await pay(loanRef, `${loanRef}-P1`, '1000', `${day(-41)}T10:00:00+05:30`);
    expect((await getLoan(loanRef)).status).toBe('PAID');
    const next = `${loanRef}-next`;
    const imported = await call(suite.admin.token, '/api/v2/loans', {
      loans: [
        {
          loanRef: next,
          imei,
          customerName: 'Asha Rao',
          currency: 'INR',
          instalments: [{ dueDate: day(30), amount: '1000' }],
        },
      ],
    });
    expect(imported.statusCode, imported.body).toBe(200);
    const before = await ledger();
    const refused = await reverse(suite.admin.token, `${loanRef}-P1`, 'chargeback');
    expect(refused.statusCode).toBe(409);
    expect(refused.json().message).toBe(LOAN_MESSAGES.reversalReopens(next));
    expect(await ledger()).toBe(before);
  });

  it('the minimum is the policy’s: one saved without it reads the default; bad values are refused', async () => {
    const policyCall = apiCaller(() => suite.app, '/api/v2/collections/');
    // A version saved before the minimum existed.
    const { lockPause: _, ...older } = POLICY;
    await suite.database.db
      .insertInto('collection_policies')
      .values({ version: 1, policy: JSON.stringify(older), created_by: 'an older version' })
      .execute();
    expect((await policyCall(suite.admin.token, 'GET', 'policy')).json()).toMatchObject({
      version: 1,
      policy: { lockPause: DEFAULT_LOCK_PAUSE },
    });
    const before = await fingerprint(suite.database.db, ['collection_policies']);
    const bad: [object, string][] = [
      [{ minAmount: 'abc', minSharePercent: null }, COLLECTIONS_MESSAGES.badMinAmount],
      [{ minAmount: '0', minSharePercent: null }, COLLECTIONS_MESSAGES.badMinAmount],
      [{ minAmount: null, minSharePercent: 0 }, COLLECTIONS_MESSAGES.badMinShare],
      [{ minAmount: null, minSharePercent: 101 }, COLLECTIONS_MESSAGES.badMinShare],
      [{ minAmount: null, minSharePercent: 12.5 }, COLLECTIONS_MESSAGES.badMinShare],
    ];
    for (const [lockPause, message] of bad) {
      const response = await policyCall(suite.superadmin.token, 'PUT', 'policy', {
        policy: { ...POLICY, lockPause },
      });
      expect(response.statusCode, JSON.stringify(lockPause)).toBe(400);
      expect(response.json().message).toContain(message);
    }
    expect(await fingerprint(suite.database.db, ['collection_policies'])).toBe(before);

    const saved = await policyCall(suite.superadmin.token, 'PUT', 'policy', {
      policy: { ...POLICY, lockPause: { minAmount: '500', minSharePercent: null } },
    });
    expect(saved.json()).toMatchObject({ version: 2, message: COLLECTIONS_MESSAGES.policySaved(2) });
    const versions = (await policyCall(suite.admin.token, 'GET', 'policy/versions')).json().items;
    expect(versions[0].changes).toEqual([
      { field: 'lockPause.minAmount', from: null, to: '500' },
      { field: 'lockPause.minSharePercent', from: 25, to: null },
    ]);
  });

  it('a release queued for approval is not approved once its loan’s payment is reversed', async () => {
    await savePolicy(suite.app, suite.superadmin.token, { ...POLICY, release: 'APPROVAL' });
    const { loanRef, imei } = await newLoan(null, -40, 1);
    await pay(loanRef, `${loanRef}-P1`, '1000', new Date().toISOString());
    const engine = testEngine(suite.app, { oneShotTtlMs: 3_600_000 });
    await engine.watchPayments();
    const queue = await suite.app.inject({
      method: 'GET',
      url: `/api/v2/collections/releases?imei=${imei}`,
      headers: { 'x-api-key': suite.admin.token },
    });
    const [release] = queue.json().items;
    expect(release).toMatchObject({ loanRef, state: 'AWAITING_APPROVAL' });

    expect((await reverse(suite.admin.token, `${loanRef}-P1`, 'bounced transfer')).json().loan.status).toBe(
      'OPEN',
    );
    const tables = ['collection_actions', 'commands'];
    const before = await fingerprint(suite.database.db, tables);
    const approve = await suite.app.inject({
      method: 'POST',
      url: `/api/v2/collections/releases/${release.id}/approve`,
      headers: { 'x-api-key': suite.admin.token },
      payload: {},
    });
    expect(approve.statusCode).toBe(409);
    expect(approve.json().message).toBe(COLLECTIONS_MESSAGES.releaseNotPaid);
    expect(await fingerprint(suite.database.db, tables)).toBe(before);

    // A loan paid off and its payment reversed before the watcher looks: nothing is queued or sent.
    const other = await newLoan(null, -40, 1);
    await pay(other.loanRef, `${other.loanRef}-P1`, '1000', new Date().toISOString());
    await reverse(suite.admin.token, `${other.loanRef}-P1`, 'bounced transfer');
    await engine.watchPayments();
    const actions = await suite.database.db
      .selectFrom('collection_actions')
      .select('kind')
      .where('imei1', '=', other.imei)
      .execute();
    expect(actions).toEqual([]);
  });
});
