/**
 * Loans and payments (docs/features.md § Loans and payments), through the API on PGlite and
 * PostgreSQL: the import (JSON and CSV; all or none; the same loan again changes nothing; a different
 * schedule only with `replace`, its payments applied again), payments (oldest instalment first, PAID at
 * the last, credit beyond; idempotent by payment_ref, also when the same payment is posted twice at once;
 * CSV all or none), the promise to pay, reading a device's loan, retailer scoping (another retailer's IMEI
 * or loan is not found, exactly as an unknown one), the audit rows, and refusals that change nothing.
 */
import {
  addDays,
  dayInTimeZone,
  LOAN_MESSAGES,
  type LoanView,
  loanPosition,
  loansCsvText,
  MESSAGES,
  type Session,
} from '@lendlock/contract';
import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { instalmentsOf, openLoanPositions } from '../src/modules/loans/repository';
import { databaseKinds, fingerprint, openTestDatabase, type TestDatabase } from './db';
import { buildKey, buildTestApp, buildUser, loginAs } from './factories';
import { multipart } from './multipart';

const RETAILER = '9555555555';
const OTHER_RETAILER = '9666666666';
let counter = 0;

describe.each(databaseKinds())('loans and payments on %s', (kind) => {
  let database: TestDatabase;
  let app: FastifyInstance;
  let admin: Session;
  let retailerAdmin: Session;
  let viewer: Session;
  let key: string;
  const today = dayInTimeZone('UTC') as string;
  const day = (n: number) => addDays(today, n);

  /** A registered device (two IMEIs), of a retailer or the lender's. */
  const device = async (retailer: string | null = null) => {
    counter++;
    const base = 356938035000000 + (kind === 'postgres' ? 500000 : 0) + counter * 2;
    const imei1 = String(base);
    const imei2 = String(base + 1);
    await database.db
      .insertInto('devices')
      .values({ imei1, imei2, retailer_phone: retailer, match_status: 'YES' })
      .execute();
    return { imei1, imei2 };
  };

  const call = (token: string, url: string, payload: object) =>
    app.inject({ method: 'POST', url, headers: { 'x-api-key': token }, payload });

  const loan = (loanRef: string, imei: string, amounts = ['1000', '1000', '1000'], first = -40) => ({
    loanRef,
    imei,
    customerName: 'Asha Rao',
    currency: 'INR',
    instalments: amounts.map((amount, i) => ({ dueDate: day(first + i * 30), amount })),
  });

  const importLoans = (token: string, loans: object[], replace?: boolean) =>
    call(token, '/api/v2/loans', { loans, ...(replace === undefined ? {} : { replace }) });

  const pay = (token: string, loanRef: string, paymentRef: string, amount: string, extra: object = {}) =>
    call(token, '/api/v2/payments', {
      paymentRef,
      loanRef,
      amount,
      paidAt: new Date().toISOString(),
      ...extra,
    });

  const getLoan = async (token: string, body: object): Promise<LoanView> => {
    const response = await call(token, '/api/v2/loans/get', body);
    expect(response.statusCode, response.body).toBe(200);
    return response.json().loan;
  };

  const state = () => fingerprint(database.db, ['loans', 'loan_instalments', 'loan_payments']);

  const audit = async (action: string, loanRef: string) =>
    (
      await database.db
        .selectFrom('audit_log')
        .select(['actor', 'target', 'details'])
        .where('action', '=', action)
        .orderBy('id')
        .execute()
    ).filter((row) => (row.details as { loanRef?: string }).loanRef === loanRef);

  beforeAll(async () => {
    database = await openTestDatabase(kind);
    app = await buildTestApp(database);
    admin = await loginAs(app, await buildUser(database, { userlevel: 'ADMIN' }));
    retailerAdmin = await loginAs(
      app,
      await buildUser(database, { userlevel: 'ADMIN', retailerPhone: RETAILER }),
    );
    viewer = await loginAs(app, await buildUser(database, { permissions: ['deviceDetails'] }));
    key = (await buildKey(app, database)).key;
  });
  afterAll(async () => {
    await app?.close();
    await database?.close();
  });

  it('imports loans, shows them on their device, audits each; the same loan again changes nothing', async () => {
    const phone = await device();
    const response = await importLoans(admin.token, [loan('L-import', phone.imei2)]);
    expect(response.json()).toEqual({
      status: 'success',
      message: LOAN_MESSAGES.imported(1, 0, 0),
      created: 1,
      replaced: 0,
      unchanged: 0,
    });
    const row = await database.db
      .selectFrom('loans')
      .selectAll()
      .where('loan_ref', '=', 'L-import')
      .executeTakeFirstOrThrow();
    // Named by its second IMEI, the loan is on the device's imei1.
    expect([row.imei, row.status, row.currency, row.customer_name]).toEqual([
      phone.imei1,
      'OPEN',
      'INR',
      'Asha Rao',
    ]);
    expect(await instalmentsOf(database.db, Number(row.id))).toEqual([
      { seq: 1, dueDate: day(-40), amountMinor: 100000, paidMinor: 0 },
      { seq: 2, dueDate: day(-10), amountMinor: 100000, paidMinor: 0 },
      { seq: 3, dueDate: day(20), amountMinor: 100000, paidMinor: 0 },
    ]);
    const shown = await getLoan(viewer.token, { imei: phone.imei2, timeZone: 'UTC' });
    expect(shown).toMatchObject({
      loanRef: 'L-import',
      imei: phone.imei1,
      status: 'OPEN',
      promiseToPayUntil: null,
    });
    expect(shown.summary).toMatchObject({
      asOf: today,
      arrearsMinor: 200000,
      daysOverdue: 40,
      overdueSince: day(-40),
      instalmentsPaid: 0,
      instalmentsUnpaid: 3,
      nextDue: { seq: 3, dueDate: day(20), amountMinor: 100000 },
      lastPayment: null,
      creditMinor: 0,
    });
    expect(await audit('loan.import', 'L-import')).toEqual([
      {
        actor: expect.stringContaining('@'),
        target: phone.imei1,
        details: expect.objectContaining({
          loanRef: 'L-import',
          created: true,
          source: 'CONSOLE',
          totalMinor: 300000,
        }),
      },
    ]);

    const before = await state();
    const again = await importLoans(admin.token, [loan('L-import', phone.imei1)]);
    expect(again.json()).toMatchObject({ created: 0, replaced: 0, unchanged: 1 });
    expect(await state()).toBe(before);
    expect(await audit('loan.import', 'L-import')).toHaveLength(1);
  });

  it('refuses the whole import with every bad loan, and changes nothing', async () => {
    const free = await device();
    const busy = await device();
    const released = await device();
    await database.db
      .updateTable('devices')
      .set({ claimstatus: 'RELEASED' })
      .where('imei1', '=', released.imei1)
      .execute();
    expect((await importLoans(admin.token, [loan('L-busy', busy.imei1)])).statusCode).toBe(200);
    const before = await state();
    const response = await importLoans(admin.token, [
      loan('L-fine', free.imei1),
      loan('L-unknown', '111111111111111'),
      loan('L-second', busy.imei1),
      loan('L-released', released.imei1),
      { ...loan('L-bad', free.imei2, ['10.505', '0']), currency: 'INR' },
      { ...loan('L-cur', free.imei2), currency: 'XYZ' },
      loan('L-fine', free.imei1),
    ]);
    expect(response.statusCode).toBe(400);
    expect(response.json()).toEqual({
      status: 'error',
      code: 'VALIDATION_FAILED',
      message: LOAN_MESSAGES.loansIncorrect,
      invalid: [
        {
          line: 5,
          error: MESSAGES.notifyIncorrectFields(
            [
              LOAN_MESSAGES.ofInstalment(1, LOAN_MESSAGES.amount(2)),
              LOAN_MESSAGES.ofInstalment(2, LOAN_MESSAGES.amount(2)),
            ].join(', '),
          ),
          data: 'L-bad',
        },
        { line: 6, error: MESSAGES.notifyIncorrectFields(LOAN_MESSAGES.currency), data: 'L-cur' },
        { line: 7, error: MESSAGES.notifyIncorrectFields(LOAN_MESSAGES.loanRepeated(1)), data: 'L-fine' },
      ],
      invalidCount: 3,
    });
    // The fields are right: what only the server knows refuses it.
    const second = await importLoans(admin.token, [
      loan('L-fine', free.imei1),
      loan('L-unknown', '111111111111111'),
      loan('L-second', busy.imei2),
      loan('L-released', released.imei1),
    ]);
    expect(second.json()).toMatchObject({
      message: LOAN_MESSAGES.loansIncorrect,
      invalid: [
        { line: 2, error: LOAN_MESSAGES.unknownImei, data: 'L-unknown' },
        { line: 3, error: LOAN_MESSAGES.openLoanExists('L-busy'), data: 'L-second' },
        { line: 4, error: LOAN_MESSAGES.deviceReleased, data: 'L-released' },
      ],
    });
    expect(await state()).toBe(before);
  });

  it('a different schedule under a known loan_ref needs replace; then its payments are applied again', async () => {
    const phone = await device();
    await importLoans(admin.token, [loan('L-replace', phone.imei1)]);
    expect((await pay(admin.token, 'L-replace', 'P-replace-1', '1500')).statusCode).toBe(200);
    const before = await state();
    const changed = loan('L-replace', phone.imei1, ['500', '500', '500', '500']);
    const refused = await importLoans(admin.token, [changed]);
    expect(refused.json().invalid).toEqual([
      { line: 1, error: LOAN_MESSAGES.scheduleDiffers, data: 'L-replace' },
    ]);
    expect(await state()).toBe(before);

    expect((await importLoans(admin.token, [changed], true)).json()).toMatchObject({ replaced: 1 });
    const shown = await getLoan(admin.token, { loanRef: 'L-replace' });
    expect(shown.instalments.map((i) => [i.amountMinor, i.paidMinor])).toEqual([
      [50000, 50000],
      [50000, 50000],
      [50000, 50000],
      [50000, 0],
    ]);
    expect(shown.summary.lastPayment?.paymentRef).toBe('P-replace-1');
    expect(await audit('loan.import', 'L-replace')).toHaveLength(2);
  });

  it('a payment pays the oldest instalment first, the last one makes the loan PAID, the rest is credit', async () => {
    const phone = await device();
    await importLoans(admin.token, [loan('L-pay', phone.imei1)]);
    const first = await pay(admin.token, 'L-pay', 'P-pay-1', '1500.50');
    expect(first.statusCode, first.body).toBe(200);
    const body = first.json();
    expect(body).toMatchObject({
      status: 'success',
      message: LOAN_MESSAGES.paymentRecorded,
      duplicate: false,
      payment: { paymentRef: 'P-pay-1', amountMinor: 150050, source: 'CONSOLE' },
    });
    expect(body.loan.instalments.map((i: { paidMinor: number }) => i.paidMinor)).toEqual([100000, 50050, 0]);
    expect(body.loan.instalments[0].paidAt).not.toBeNull();
    expect(body.loan.summary).toMatchObject({ arrearsMinor: 49950, daysOverdue: 10, overdueSince: day(-10) });

    const last = await pay(key, 'L-pay', 'P-pay-2', '1600', { currency: 'INR' });
    expect(last.json()).toMatchObject({
      payment: { source: 'API' },
      loan: {
        status: 'PAID',
        summary: { outstandingMinor: 0, creditMinor: 10050, daysOverdue: 0, nextDue: null },
      },
    });
    expect(await audit('loan.payment', 'L-pay')).toEqual([
      expect.objectContaining({
        target: phone.imei1,
        details: expect.objectContaining({ paymentRef: 'P-pay-1', amountMinor: 150050 }),
      }),
      expect.objectContaining({
        details: expect.objectContaining({ paymentRef: 'P-pay-2', loanPaid: true, creditMinor: 10050 }),
      }),
    ]);
    // A PAID loan still takes a payment (money received is a fact): it is credit.
    expect((await pay(admin.token, 'L-pay', 'P-pay-3', '1')).json().loan.summary.creditMinor).toBe(10150);
  });

  it('a payment_ref is recorded once: the same payment again answers the first, another one is a conflict', async () => {
    const phone = await device();
    const other = await device();
    await importLoans(admin.token, [loan('L-idem', phone.imei1), loan('L-idem-2', other.imei1)]);
    const first = await pay(key, 'L-idem', 'P-idem', '250');
    const before = await state();
    const again = await pay(key, 'L-idem', 'P-idem', '250.00');
    expect(again.statusCode).toBe(200);
    expect(again.json()).toMatchObject({
      message: LOAN_MESSAGES.paymentDuplicate,
      duplicate: true,
      payment: first.json().payment,
    });
    expect(await state()).toBe(before);
    for (const [loanRef, amount] of [
      ['L-idem', '251'],
      ['L-idem-2', '250'],
    ] as const) {
      const conflict = await pay(key, loanRef, 'P-idem', amount);
      expect([conflict.statusCode, conflict.json().message]).toEqual([409, LOAN_MESSAGES.paymentConflict]);
    }
    expect(await state()).toBe(before);
  });

  it('the same payment posted twice at once is recorded once', async () => {
    const phone = await device();
    await importLoans(admin.token, [loan('L-race', phone.imei1)]);
    const answers = await Promise.all(Array.from({ length: 4 }, () => pay(key, 'L-race', 'P-race', '700')));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200]);
    expect(answers.filter((a) => a.json().duplicate === false)).toHaveLength(1);
    const payments = await database.db
      .selectFrom('loan_payments')
      .select('amount_minor')
      .where('payment_ref', '=', 'P-race')
      .execute();
    expect(payments.map((p) => Number(p.amount_minor))).toEqual([70000]);
    const shown = await getLoan(admin.token, { loanRef: 'L-race' });
    expect(shown.instalments.map((i) => i.paidMinor)).toEqual([70000, 0, 0]);
    expect(await audit('loan.payment', 'L-race')).toHaveLength(1);
  });

  it('refuses bad payments with a clear message and changes nothing', async () => {
    const phone = await device();
    await importLoans(admin.token, [loan('L-refuse', phone.imei1)]);
    const before = await state();
    const cases: [object, number, string][] = [
      [{ amount: '0' }, 400, LOAN_MESSAGES.amount(2)],
      [{ amount: '10.123' }, 400, LOAN_MESSAGES.amount(2)],
      [{ amount: '10', currency: 'USD' }, 400, LOAN_MESSAGES.currencyMismatch('USD', 'INR')],
      [{ paidAt: new Date(Date.now() + 3_600_000).toISOString() }, 400, LOAN_MESSAGES.paidAtFuture],
      [{ paidAt: '01/07/2026' }, 400, LOAN_MESSAGES.paidAt],
      [{ loanRef: 'L-nobody' }, 404, LOAN_MESSAGES.unknownLoan],
    ];
    for (const [change, status, message] of cases) {
      const response = await call(key, '/api/v2/payments', {
        paymentRef: `P-refuse-${status}-${message.length}`,
        loanRef: 'L-refuse',
        amount: '10',
        paidAt: today,
        ...change,
      });
      expect([response.statusCode, response.json().message], JSON.stringify(change)).toEqual([
        status,
        message,
      ]);
    }
    expect(await state()).toBe(before);
  });

  it('a retailer’s ADMIN reaches only its devices’ loans: another’s is not found, as an unknown one is', async () => {
    const ours = await device(RETAILER);
    const theirs = await device(OTHER_RETAILER);
    await importLoans(admin.token, [loan('L-theirs', theirs.imei1)]);
    const imported = await importLoans(retailerAdmin.token, [loan('L-ours', ours.imei1)]);
    expect(imported.json()).toMatchObject({ created: 1 });
    const before = await state();

    const refused = await importLoans(retailerAdmin.token, [
      loan('L-x', theirs.imei1),
      loan('L-y', '111111111111111'),
    ]);
    expect(refused.json().invalid.map((r: { error: string }) => r.error)).toEqual([
      LOAN_MESSAGES.unknownImei,
      LOAN_MESSAGES.unknownImei,
    ]);
    // Another retailer's ref is unused for this one (references are per tenant): the refusal is about
    // its own device's open loan, and says nothing of L-theirs.
    const replaced = await importLoans(retailerAdmin.token, [loan('L-theirs', ours.imei2, ['1'])], true);
    expect(replaced.json().invalid).toEqual([
      { line: 1, error: LOAN_MESSAGES.openLoanExists('L-ours'), data: 'L-theirs' },
    ]);
    for (const [url, body] of [
      ['/api/v2/loans/get', { imei: theirs.imei1 }],
      ['/api/v2/loans/get', { loanRef: 'L-theirs' }],
      ['/api/v2/payments', { paymentRef: 'P-theirs', loanRef: 'L-theirs', amount: '1', paidAt: today }],
      ['/api/v2/loans/promise', { loanRef: 'L-theirs', until: today }],
    ] as const) {
      const response = await call(retailerAdmin.token, url, body);
      expect(response.statusCode, url).toBe(404);
      expect(response.body).not.toContain(theirs.imei1);
      const unknown = await call(retailerAdmin.token, url, {
        ...body,
        ...('imei' in body ? { imei: '111111111111111' } : { loanRef: 'L-nobody' }),
      });
      expect(response.json().message, url).toBe(unknown.json().message);
    }
    expect(await state()).toBe(before);
    expect((await getLoan(retailerAdmin.token, { imei: ours.imei1 })).loanRef).toBe('L-ours');
  });

  it('a promise to pay is set for today up to 90 days ahead on an open loan, cleared, and audited', async () => {
    const phone = await device();
    await importLoans(admin.token, [loan('L-promise', phone.imei1)]);
    const before = await state();
    for (const [until, message] of [
      [day(-1), LOAN_MESSAGES.promisePast],
      [day(91), LOAN_MESSAGES.promiseTooFar(90)],
    ] as const) {
      const response = await call(admin.token, '/api/v2/loans/promise', {
        loanRef: 'L-promise',
        until,
        timeZone: 'UTC',
      });
      expect([response.statusCode, response.json().message]).toEqual([400, message]);
    }
    expect(await state()).toBe(before);
    const set = await call(admin.token, '/api/v2/loans/promise', {
      loanRef: 'L-promise',
      until: day(3),
      timeZone: 'UTC',
    });
    expect(set.json()).toMatchObject({
      message: LOAN_MESSAGES.promiseSet(day(3)),
      loan: { promiseToPayUntil: day(3) },
    });
    const cleared = await call(admin.token, '/api/v2/loans/promise', { loanRef: 'L-promise', until: null });
    expect(cleared.json()).toMatchObject({
      message: LOAN_MESSAGES.promiseCleared,
      loan: { promiseToPayUntil: null },
    });
    expect((await audit('loan.promise', 'L-promise')).map((r) => r.details)).toEqual([
      { loanRef: 'L-promise', until: day(3), previous: null },
      { loanRef: 'L-promise', until: null, previous: day(3) },
    ]);
    await pay(admin.token, 'L-promise', 'P-promise', '3000');
    const paid = await call(admin.token, '/api/v2/loans/promise', { loanRef: 'L-promise', until: today });
    expect([paid.statusCode, paid.json().message]).toEqual([409, LOAN_MESSAGES.loanPaid]);
  });

  it('imports a loans CSV, or refuses it whole with its rows as incorrect_data.csv lists them', async () => {
    const a = await device();
    const b = await device();
    const upload = (content: string, fields: Record<string, string> = {}) => {
      const body = multipart(fields, { name: 'loans.csv', type: 'text/csv', content });
      return app.inject({
        method: 'POST',
        url: '/api/v2/loans/upload',
        headers: { 'x-api-key': admin.token, ...body.headers },
        payload: body.payload,
      });
    };
    const csvLoan = (loanRef: string, imei: string) => ({
      ...loan(loanRef, imei),
      instalments: loan(loanRef, imei).instalments.map((i) => ({ ...i, amount: '999.99' })),
    });
    const before = await state();
    const bad = await upload(
      `${loansCsvText([csvLoan('L-csv-1', a.imei1)])}L-csv-2,${b.imei1},Ravi,INR,1,2026-02-30,5\r\n`,
    );
    expect(bad.statusCode).toBe(400);
    expect(bad.json()).toMatchObject({
      message: LOAN_MESSAGES.loansIncorrect,
      invalid: [{ line: 5, error: MESSAGES.notifyIncorrectFields(LOAN_MESSAGES.dueDate) }],
      invalidCount: 1,
    });
    const unknown = await upload(
      loansCsvText([csvLoan('L-csv-1', a.imei1), csvLoan('L-csv-2', '111111111111111')]),
    );
    expect(unknown.json().invalid).toEqual([
      {
        line: 5,
        error: LOAN_MESSAGES.unknownImei,
        data: `L-csv-2,111111111111111,Asha Rao,INR,1,${day(-40)},999.99`,
      },
    ]);
    expect(await state()).toBe(before);

    const good = await upload(loansCsvText([csvLoan('L-csv-1', a.imei1), csvLoan('L-csv-2', b.imei2)]));
    expect(good.json()).toMatchObject({ created: 2, message: LOAN_MESSAGES.imported(2, 0, 0) });
    expect((await getLoan(admin.token, { imei: b.imei1 })).summary.totalMinor).toBe(299997);
    expect((await audit('loan.import', 'L-csv-2'))[0]?.details).toMatchObject({ source: 'CSV' });
  });

  it('refuses an upload that is no CSV, has no file, or a name with a NUL character, and changes nothing', async () => {
    const phone = await device();
    const before = await state();
    const send = (url: string, file: { name: string; type: string; content: string } | null) => {
      const body = multipart({}, file);
      return app.inject({
        method: 'POST',
        url,
        headers: { 'x-api-key': admin.token, ...body.headers },
        payload: body.payload,
      });
    };
    for (const url of ['/api/v2/loans/upload', '/api/v2/payments/upload']) {
      const notCsv = await send(url, {
        name: 'loans.xlsx',
        type: 'application/vnd.ms-excel.sheet',
        content: 'x',
      });
      expect([notCsv.statusCode, notCsv.json().message]).toEqual([415, MESSAGES.onlyCsv]);
      const none = await send(url, null);
      expect([none.statusCode, none.json().message]).toEqual([400, LOAN_MESSAGES.noFile]);
      const json = await call(admin.token, url, {});
      expect([json.statusCode, json.json().message]).toEqual([400, LOAN_MESSAGES.noFile]);
    }
    const nul = await send('/api/v2/loans/upload', {
      name: 'loans.csv',
      type: 'text/csv',
      content: loansCsvText([{ ...loan('L-nul', phone.imei1), customerName: 'Asha\u0000Rao' }]),
    });
    expect(nul.statusCode).toBe(400);
    expect(nul.json().invalid[0].error).toBe(
      MESSAGES.notifyIncorrectFields(LOAN_MESSAGES.customerNameUnstorable),
    );
    expect(await state()).toBe(before);
  });

  it('records a payments CSV all or none; payments recorded before are counted, not repeated', async () => {
    const phone = await device();
    await importLoans(admin.token, [loan('L-pcsv', phone.imei1)]);
    await pay(admin.token, 'L-pcsv', 'P-pcsv-0', '100');
    const upload = (content: string) => {
      const body = multipart({}, { name: 'payments.csv', type: 'text/csv', content });
      return app.inject({
        method: 'POST',
        url: '/api/v2/payments/upload',
        headers: { 'x-api-key': admin.token, ...body.headers },
        payload: body.payload,
      });
    };
    const head = 'payment_ref,loan_ref,amount,paid_at\r\n';
    const before = await state();
    const refused = await upload(
      `${head}P-pcsv-1,L-pcsv,200,${today}\r\nP-pcsv-2,L-nobody,5,${today}\r\nP-pcsv-0,L-pcsv,99,${today}\r\nP-pcsv-3,L-pcsv,1.005,${today}\r\n`,
    );
    expect(refused.json()).toMatchObject({
      message: LOAN_MESSAGES.paymentsIncorrect,
      invalid: [
        { line: 3, error: LOAN_MESSAGES.unknownLoan, data: `P-pcsv-2,L-nobody,5,${today}` },
        { line: 4, error: LOAN_MESSAGES.paymentConflict },
        { line: 5, error: LOAN_MESSAGES.amount(2) },
      ],
      invalidCount: 3,
    });
    expect(await state()).toBe(before);
    const recorded = await upload(`${head}P-pcsv-0,L-pcsv,100,${today}\r\nP-pcsv-1,L-pcsv,200,${today}\r\n`);
    expect(recorded.json()).toEqual({
      status: 'success',
      message: LOAN_MESSAGES.paymentsRecorded(1, 1),
      recorded: 1,
      duplicates: 1,
    });
    const shown = await getLoan(admin.token, { loanRef: 'L-pcsv' });
    expect(shown.instalments[0]?.paidMinor).toBe(30000);
    expect(shown.payments.map((p) => [p.paymentRef, p.source])).toEqual(
      expect.arrayContaining([
        ['P-pcsv-0', 'CONSOLE'],
        ['P-pcsv-1', 'CSV'],
      ]),
    );
  });

  it('a device without a loan, or an IMEI without a device, answers not found', async () => {
    const phone = await device();
    for (const imei of [phone.imei1, '111111111111111']) {
      const response = await call(viewer.token, '/api/v2/loans/get', { imei });
      expect([response.statusCode, response.json().message]).toEqual([404, LOAN_MESSAGES.noLoanForImei]);
    }
  });

  it('the positions of the open loans, set-based, are the contract’s loanPosition of each', async () => {
    const ids = (
      await database.db.selectFrom('loans').select('id').where('status', '=', 'OPEN').execute()
    ).map((r) => Number(r.id));
    expect(ids.length).toBeGreaterThan(5);
    for (const on of [day(-60), day(-10), today, day(25), day(200)]) {
      const rows = await database.db
        .selectFrom(openLoanPositions(database.db, on).as('p'))
        .selectAll()
        .execute();
      for (const id of ids) {
        const expected = loanPosition(await instalmentsOf(database.db, id), on);
        const row = rows.find((r) => Number(r.loanId) === id);
        expect(
          {
            arrears: Number(row?.arrearsMinor),
            days: Number(row?.daysOverdue),
            next: row?.nextDueDate ?? null,
            outstanding: Number(row?.outstandingMinor),
            unpaid: Number(row?.instalmentsUnpaid),
          },
          `${id} on ${on}`,
        ).toEqual({
          arrears: expected.arrearsMinor,
          days: expected.daysOverdue,
          next: expected.nextDue?.dueDate ?? null,
          outstanding: expected.outstandingMinor,
          unpaid: expected.instalmentsUnpaid,
        });
      }
    }
    // One row per open loan.
    const count = await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM loans WHERE status = 'OPEN'`.execute(database.db);
    expect(Number(count.rows[0]?.n)).toBe(ids.length);
  });
});
