/**
 * Loans and payments in a real browser against the real server: an ADMIN imports a
 * loans CSV on the Loans screen (a file naming an unknown IMEI is refused whole, its row listed as
 * incorrect_data.csv lists it), sees the loan on Device Details (next due date and amount, days overdue,
 * instalments paid and unpaid), records a payment there and sees the loan change; the same payment
 * reference again records nothing.
 */
import { addDays, displayAmount, LOAN_MESSAGES, loansCsvText, localDay } from '@lendlock/contract';
import type { NodeEnvelopeCodec } from '@lendlock/contract/node';
import { profileFor, rng, SimulatedDevice } from '@lendlock/device-sim';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEVICE_LABELS } from '../apps/web/src/features/devices/labels';
import { LOAN_LABELS } from '../apps/web/src/features/loans/labels';
import {
  consolePagePerTest,
  fieldLabelled,
  launchBrowser,
  screenTitle,
  serverCodec,
  signIn,
} from './support/browser';
import { newEnrollmentSecret, randomSeed } from './support/fleet';
import { type RunningServer, startServer } from './support/server';
import { USERS } from './support/users';

const enrollmentSecret = newEnrollmentSecret();
const seed = randomSeed();

let server: RunningServer;
let browser: Browser;
let codec: NodeEnvelopeCodec;
const consolePage = consolePagePerTest(
  () => browser,
  () => server.baseUrl,
);
let imei = '';

beforeAll(async () => {
  [server, browser] = await Promise.all([
    startServer({
      templateDataDir: inject('templateDataDir'),
      env: () => ({ ENROLLMENT_SECRET: enrollmentSecret }),
    }),
    launchBrowser(),
  ]);
  ({ codec } = await serverCodec(server.baseUrl));
  const device = new SimulatedDevice(profileFor(seed, 0, rng(seed)), {
    server: server.baseUrl,
    enrollmentSecret,
  });
  await device.register();
  imei = device.imei;
});

afterAll(async () => {
  await browser?.close();
  await server?.stop();
});

describe('Loans', () => {
  it('an ADMIN imports a loan, sees it on Device Details, records a payment and sees the loan change', async () => {
    const { page } = consolePage;
    // Days in the browser's zone, as the console asks the server for them.
    const today = localDay();
    const schedule = [-12, 18, 48].map((days) => ({ dueDate: addDays(today, days), amount: '1499.50' }));
    const loan = {
      loanRef: `LN-E2E-${seed}`,
      imei,
      customerName: 'Asha Rao',
      currency: 'INR',
      instalments: schedule,
    };

    await signIn(page, codec, USERS.admin);
    await page.getByTestId('nav-loans').click();
    await page.getByRole('heading', { name: screenTitle('loans'), exact: true }).waitFor();
    const loansCard = page.getByTestId('loans-csv');
    const upload = (text: string) =>
      loansCard
        .locator('input[type="file"]')
        .setInputFiles({ name: 'loans.csv', mimeType: 'text/csv', buffer: Buffer.from(text) });

    // A loan on an IMEI the server does not know: the whole file is refused, its row listed.
    await upload(loansCsvText([{ ...loan, imei: '111111111111111' }]));
    await loansCard.getByRole('button', { name: LOAN_LABELS.importButton }).click();
    await expect(loansCard.getByTestId('loans-outcome').textContent()).resolves.toBe(
      LOAN_MESSAGES.loansIncorrect,
    );
    await expect(loansCard.getByTestId('invalid-rows').textContent()).resolves.toContain(
      LOAN_MESSAGES.unknownImei,
    );

    await upload(loansCsvText([loan]));
    await loansCard.getByRole('button', { name: LOAN_LABELS.importButton }).click();
    await expect(loansCard.getByTestId('loans-outcome').textContent()).resolves.toBe(
      LOAN_MESSAGES.imported(1, 0, 0),
    );

    // Device Details: the loan as of today, 12 days overdue on the first instalment.
    await page.getByTestId('nav-deviceDetails').click();
    await fieldLabelled(page, DEVICE_LABELS.searchLabel).fill(imei);
    const panel = page.getByTestId('loan-panel');
    await expect(panel.getByTestId('loan-ref').textContent()).resolves.toBe(loan.loanRef);
    const amount = displayAmount(149950, 'INR');
    await expect(panel.getByTestId('loan-next-due').textContent()).resolves.toBe(
      `${schedule[1]?.dueDate} · ${amount}`,
    );
    await expect(panel.getByTestId('loan-days-overdue').textContent()).resolves.toBe('12');
    await expect(panel.getByTestId('loan-arrears').textContent()).resolves.toBe(amount);
    await expect(panel.getByTestId('loan-instalments').textContent()).resolves.toBe('0 paid · 3 unpaid');
    await expect(panel.getByTestId('loan-last-payment').textContent()).resolves.toBe(LOAN_LABELS.noPayment);

    // A payment of the overdue instalment: nothing overdue, one instalment paid, the payment shown.
    const pay = async (reference: string) => {
      await panel.getByLabel(LOAN_LABELS.paymentRef).fill(reference);
      await panel.getByLabel(LOAN_LABELS.paymentAmount('INR')).fill('1499.50');
      await panel.getByRole('button', { name: LOAN_LABELS.recordPayment }).click();
    };
    await pay('RCPT-E2E-1');
    await expect(panel.getByTestId('payment-outcome').textContent()).resolves.toBe(
      LOAN_MESSAGES.paymentRecorded,
    );
    await panel.getByText('1 paid · 2 unpaid').waitFor();
    await expect(panel.getByTestId('loan-days-overdue').textContent()).resolves.toBe('0');
    await expect(panel.getByTestId('loan-arrears').textContent()).resolves.toBe(displayAmount(0, 'INR'));
    await expect(panel.getByTestId('loan-last-payment').textContent()).resolves.toBe(
      LOAN_LABELS.paymentOn(amount, today, 'RCPT-E2E-1'),
    );

    // The same receipt again (a double click, a retry): recorded once.
    await pay('RCPT-E2E-1');
    await expect(panel.getByTestId('payment-outcome').textContent()).resolves.toBe(
      LOAN_MESSAGES.paymentDuplicate,
    );
    await expect(panel.getByTestId('loan-instalments').textContent()).resolves.toBe('1 paid · 2 unpaid');
  });
});
