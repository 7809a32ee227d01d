// @vitest-environment happy-dom
/**
 * A loan's payments and their reversal, over a fake API client: an ADMIN reverses a payment with a reason
 * (a missing reason is refused before any call), sees the server's message and the payment marked
 * reversed with who and why; the server's refusal is shown; a USER sees the payments and no Reverse button.
 */
import { LOAN_MESSAGES, type LoanPayment, type LoanView, type Session } from '@lendlock/contract';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ApiError } from '../../api/client';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices, TEST_SESSION } from '../../test/render';
import { LOAN_LABELS as L } from './labels';
import { PaymentList } from './PaymentList';

const payment = (paymentRef: string, amountMinor: number): LoanPayment => ({
  paymentRef,
  amountMinor,
  paidAt: '2030-03-01T10:00:00.000Z',
  receivedAt: '2030-03-01T10:00:05.000Z',
  source: 'API',
  recordedBy: 'bank@lendlock.com',
  reversedAt: null,
  reversedBy: null,
  reversalReason: null,
});

const loanWith = (payments: LoanPayment[]): LoanView => ({
  loanRef: 'LN-7',
  retailerPhone: null,
  imei: '356938035643809',
  customerName: 'Asha Rao',
  currency: 'INR',
  status: 'OPEN',
  promiseToPayUntil: null,
  createdAt: '2030-01-01T00:00:00.000Z',
  createdBy: 'admin@lendlock.com',
  summary: {
    asOf: '2030-03-10',
    timeZone: 'Asia/Kolkata',
    totalMinor: 300000,
    paidMinor: 100000,
    outstandingMinor: 200000,
    arrearsMinor: 0,
    creditMinor: 0,
    daysOverdue: 0,
    overdueSince: null,
    instalmentsPaid: 1,
    instalmentsUnpaid: 2,
    nextDue: null,
    lastPayment: null,
  },
  instalments: [],
  payments,
});

/** The server: `v2/payments/reverse` reverses a standing payment, or refuses as `refuse` says. */
function server(refuse: ApiError | null = null) {
  return fakeApi((script, body) => {
    if (script !== 'v2/payments/reverse') throw new Error(`unexpected call ${script}`);
    if (refuse) throw refuse;
    const { paymentRef, reason } = body as { paymentRef: string; reason: string };
    const reversed = {
      ...payment(paymentRef, 100000),
      reversedAt: '2030-03-10T09:00:00.000Z',
      reversedBy: TEST_SESSION.email,
      reversalReason: reason,
    };
    return {
      status: 'success',
      message: LOAN_MESSAGES.paymentReversed,
      duplicate: false,
      payment: reversed,
      loan: loanWith([reversed]),
    };
  });
}

beforeEach(() => {
  if (!('fonts' in document))
    Object.defineProperty(document, 'fonts', {
      configurable: true,
      value: { addEventListener: () => undefined, removeEventListener: () => undefined },
    });
});
afterEach(cleanup);

describe('a loan’s payments', { timeout: 30_000 }, () => {
  it('an ADMIN reverses a payment with a reason and sees the server’s message', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<PaymentList loan={loanWith([payment('RCPT-1', 100000)])} canManage />, { api });
    const list = screen.getByTestId('loan-payments');
    expect(within(list).getByTestId('payment-RCPT-1').textContent).toContain('INR 1,000.00');

    await user.click(within(list).getByRole('button', { name: L.reverseOf('RCPT-1') }));
    const form = within(list).getByRole('form', { name: L.reverseTitle('RCPT-1', 'INR 1,000.00') });
    await user.click(within(form).getByRole('button', { name: L.confirmReverse }));
    expect(await within(form).findByText(LOAN_MESSAGES.reversalReason)).toBeTruthy();
    expect(calls).toEqual([]);

    await user.type(within(form).getByLabelText(L.reversalReason, { exact: false }), 'chargeback');
    await user.click(within(form).getByRole('button', { name: L.confirmReverse }));
    expect(await within(list).findByText(LOAN_MESSAGES.paymentReversed)).toBeTruthy();
    expect(calls.map((c) => [c.script, c.options.body])).toEqual([
      ['v2/payments/reverse', expect.objectContaining({ paymentRef: 'RCPT-1', reason: 'chargeback' })],
    ]);
    await waitFor(() => expect(within(list).queryByRole('form')).toBeNull());
  });

  it('a reversed payment says when, by whom and why, and offers no Reverse', () => {
    const reversed = {
      ...payment('RCPT-4', 100000),
      reversedAt: '2030-03-10T09:00:00.000Z',
      reversedBy: 'ops@lendlock.com',
      reversalReason: 'bounced transfer',
    };
    const { api } = server();
    renderWithServices(<PaymentList loan={loanWith([reversed])} canManage />, { api });
    const row = screen.getByTestId('payment-RCPT-4');
    expect(within(row).getByText(L.reversedBadge)).toBeTruthy();
    expect(row.textContent).toContain('ops@lendlock.com');
    expect(row.textContent).toContain('bounced transfer');
    expect(within(row).queryByRole('button', { name: L.reverseOf('RCPT-4') })).toBeNull();
  });

  it('shows the server’s refusal and keeps the form', async () => {
    const user = userEvent.setup();
    const refusal = new ApiError(404, { status: 'error', message: LOAN_MESSAGES.unknownPayment });
    const { api } = server(refusal);
    renderWithServices(<PaymentList loan={loanWith([payment('RCPT-2', 50000)])} canManage />, { api });
    await user.click(screen.getByRole('button', { name: L.reverseOf('RCPT-2') }));
    await user.type(screen.getByLabelText(L.reversalReason, { exact: false }), 'bounced');
    await user.click(screen.getByRole('button', { name: L.confirmReverse }));
    expect(await screen.findByText(LOAN_MESSAGES.unknownPayment)).toBeTruthy();
    expect(screen.getByRole('form')).toBeTruthy();
  });

  it('a USER sees the payments and no Reverse button', async () => {
    const { api, calls } = server();
    const viewer: Session = { ...TEST_SESSION, userlevel: 'USER' };
    renderWithServices(<PaymentList loan={loanWith([payment('RCPT-3', 100000)])} canManage={false} />, {
      api,
      session: viewer,
    });
    expect(screen.getByTestId('payment-RCPT-3')).toBeTruthy();
    expect(screen.queryByRole('button', { name: L.reverseOf('RCPT-3') })).toBeNull();
    expect(calls).toEqual([]);
  });
});
