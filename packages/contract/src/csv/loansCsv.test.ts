import { describe, expect, it } from 'vitest';
import { LOAN_MESSAGES, MESSAGES } from '../messages';
import { CSV_FORMAT_MESSAGES } from './encoding';
import { IMEI_CSV_NO_DATA_NOTE } from './imeiCsv';
import { LOANS_CSV_HEADERS, loansCsvText, validateLoansCsv } from './loansCsv';
import { validatePaymentsCsv } from './paymentsCsv';

const HEADER = LOANS_CSV_HEADERS.join(',');
const IMEI_A = '356938035643809';
const IMEI_B = '356938035643817';
const fields = (...errors: string[]) => MESSAGES.notifyIncorrectFields(errors.join(', '));

describe('the loans CSV', () => {
  it('reads one loan per loan_ref, its instalments in order, amounts in minor units', async () => {
    const text = [
      HEADER,
      `L-1,${IMEI_A},Asha Rao,INR,2,2026-02-05,1500.50`,
      `L-1,${IMEI_A},Asha Rao,INR,1,2026-01-05,1500`,
      '',
      ',,,,,,',
      `L-2,${IMEI_B},"Rao, Ravi",JPY,1,2026-01-10,3000`,
    ].join('\r\n');
    const result = await validateLoansCsv(`\uFEFF${text}`);
    expect(result.invalid).toEqual([]);
    expect(result.total).toBe(3);
    expect(result.loans).toEqual([
      {
        loanRef: 'L-1',
        imei: IMEI_A,
        customerName: 'Asha Rao',
        currency: 'INR',
        instalments: [
          { dueDate: '2026-01-05', amountMinor: 150000 },
          { dueDate: '2026-02-05', amountMinor: 150050 },
        ],
        line: 2,
        data: `L-1,${IMEI_A},Asha Rao,INR,2,2026-02-05,1500.50`,
      },
      expect.objectContaining({
        loanRef: 'L-2',
        customerName: 'Rao, Ravi',
        instalments: [{ dueDate: '2026-01-10', amountMinor: 3000 }],
      }),
    ]);
  });

  it('refuses other headers as the spec does, or names the file’s separator', async () => {
    expect((await validateLoansCsv('Sno,IMEI1\r\n1,356938035643809\r\n')).invalid).toEqual([
      { line: 1, error: MESSAGES.invalidHeaders, data: MESSAGES.headersNotMatched },
    ]);
    expect((await validateLoansCsv(`${LOANS_CSV_HEADERS.join(';')}\r\n`)).invalid[0]?.error).toBe(
      CSV_FORMAT_MESSAGES.semicolons,
    );
  });

  it('reports every bad field of a row together, in the spec’s style, and imports nothing', async () => {
    const result = await validateLoansCsv(
      [
        HEADER,
        `L-1,${IMEI_A},Asha,INR,1,2026-01-05,100`,
        `L 2,12345,,inr,0,05/01/2026,1.5`,
        `L-3,${IMEI_B},Ravi,JPY,1,2026-02-30,10.5`,
        `L-4,${IMEI_B}`,
      ].join('\n'),
    );
    expect(result.loans).toEqual([]);
    expect(result.invalid).toEqual([
      {
        line: 3,
        error: fields(
          LOAN_MESSAGES.reference('loan_ref'),
          MESSAGES.notifyImei,
          LOAN_MESSAGES.customerName,
          LOAN_MESSAGES.currency,
          LOAN_MESSAGES.instalmentNo,
          LOAN_MESSAGES.dueDate,
        ),
        data: 'L 2,12345,,inr,0,05/01/2026,1.5',
      },
      {
        line: 4,
        error: fields(LOAN_MESSAGES.dueDate, LOAN_MESSAGES.amount(0)),
        data: `L-3,${IMEI_B},Ravi,JPY,1,2026-02-30,10.5`,
      },
      { line: 5, error: MESSAGES.notifyColumns, data: `L-4,${IMEI_B}` },
    ]);
    expect(result.invalidCount).toBe(3);
  });

  it('the rows of a loan agree; its instalments run 1 to N, each due after the one before', async () => {
    const result = await validateLoansCsv(
      [
        HEADER,
        `L-1,${IMEI_A},Asha,INR,1,2026-01-05,100`,
        `L-1,${IMEI_B},Asha R,USD,2,2026-02-05,100`,
        `L-1,${IMEI_A},Asha,INR,1,2026-03-05,100`,
        `L-2,${IMEI_B},Ravi,INR,1,2026-01-05,100`,
        `L-2,${IMEI_B},Ravi,INR,3,2026-03-05,100`,
        `L-3,${IMEI_A},Mina,INR,1,2026-01-05,100`,
        `L-4,356938035643825,Joy,INR,1,2026-02-05,100`,
        `L-4,356938035643825,Joy,INR,2,2026-02-05,100`,
      ].join('\n'),
    );
    expect(result.invalid).toEqual([
      {
        line: 3,
        error: fields(
          LOAN_MESSAGES.differs('imei', 2),
          LOAN_MESSAGES.differs('customer_name', 2),
          LOAN_MESSAGES.differs('currency', 2),
        ),
        data: `L-1,${IMEI_B},Asha R,USD,2,2026-02-05,100`,
      },
      {
        line: 4,
        error: fields(LOAN_MESSAGES.instalmentRepeated(2)),
        data: `L-1,${IMEI_A},Asha,INR,1,2026-03-05,100`,
      },
      {
        line: 5,
        error: fields(LOAN_MESSAGES.instalmentGap(2)),
        data: `L-2,${IMEI_B},Ravi,INR,1,2026-01-05,100`,
      },
      {
        line: 7,
        error: fields(LOAN_MESSAGES.imeiRepeated('L-1')),
        data: `L-3,${IMEI_A},Mina,INR,1,2026-01-05,100`,
      },
      {
        line: 8,
        error: fields(LOAN_MESSAGES.dueNotAfter(2, '2026-02-05')),
        data: 'L-4,356938035643825,Joy,INR,1,2026-02-05,100',
      },
    ]);
  });

  it('a file with a header only passes with nothing to import', async () => {
    expect(await validateLoansCsv(`${HEADER}\r\n`)).toEqual({
      loans: [],
      invalid: [],
      invalidCount: 0,
      total: 0,
      note: IMEI_CSV_NO_DATA_NOTE,
    });
  });

  it('loansCsvText writes what the validator reads', async () => {
    const loans = [
      {
        loanRef: 'L-9',
        imei: IMEI_A,
        customerName: 'Rao, "Asha"',
        currency: 'INR',
        instalments: [
          { dueDate: '2026-01-05', amount: '10.50' },
          { dueDate: '2026-02-05', amount: '10.50' },
        ],
      },
    ];
    const [loan] = (await validateLoansCsv(loansCsvText(loans))).loans;
    expect(loan).toMatchObject({
      loanRef: 'L-9',
      customerName: 'Rao, "Asha"',
      instalments: [{ amountMinor: 1050 }, { amountMinor: 1050 }],
    });
  });
});

describe('the payments CSV', () => {
  const now = new Date('2026-07-01T12:00:00Z');
  const PAYMENTS = 'payment_ref,loan_ref,amount,paid_at';

  it('reads each payment with its instant', async () => {
    const result = await validatePaymentsCsv(
      `${PAYMENTS}\r\nP-1,L-1,1500.50,2026-06-30\r\nP-2,L-1,10,2026-07-01T10:30:00+05:30\r\n`,
      { now },
    );
    expect(result.invalid).toEqual([]);
    expect(result.payments).toEqual([
      {
        paymentRef: 'P-1',
        loanRef: 'L-1',
        amount: '1500.50',
        paidAt: '2026-06-30T00:00:00.000Z',
        line: 2,
        data: 'P-1,L-1,1500.50,2026-06-30',
      },
      {
        paymentRef: 'P-2',
        loanRef: 'L-1',
        amount: '10',
        paidAt: '2026-07-01T05:00:00.000Z',
        line: 3,
        data: 'P-2,L-1,10,2026-07-01T10:30:00+05:30',
      },
    ]);
  });

  it('refuses bad fields, a repeated payment_ref and a payment in the future, and records nothing', async () => {
    const result = await validatePaymentsCsv(
      [PAYMENTS, 'P-1,L-1,0,2026-06-30', 'P-2,L 1,1.5,2026-08-01', 'P-2,L-1,2,2026-06-30', 'P-3,L-1'].join(
        '\n',
      ),
      { now },
    );
    expect(result.payments).toEqual([]);
    expect(result.invalid).toEqual([
      { line: 2, error: fields(LOAN_MESSAGES.amountShape), data: 'P-1,L-1,0,2026-06-30' },
      {
        line: 3,
        error: fields(LOAN_MESSAGES.reference('loan_ref'), LOAN_MESSAGES.paidAtFuture),
        data: 'P-2,L 1,1.5,2026-08-01',
      },
      { line: 4, error: fields(LOAN_MESSAGES.paymentRepeated(3)), data: 'P-2,L-1,2,2026-06-30' },
      { line: 5, error: MESSAGES.notifyColumns, data: 'P-3,L-1' },
    ]);
  });
});
