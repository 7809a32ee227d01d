/**
 * Loans and payments (docs/features.md § Loans and payments): `v2/loans/get` (a device's loan, or a loan
 * by its ref), `v2/loans/upload` (a loans CSV), `v2/payments` (one payment, from the console's form),
 * `v2/payments/upload` (a payments CSV), `v2/payments/reverse` (a chargeback, a bounced transfer) and
 * `v2/loans/promise`. Each carries the browser's time zone, so
 * the loan's summary (next due, days overdue) is for the operator's today.
 */
import {
  type ImportLoansResponse,
  importLoansResponseSchema,
  type LoanView,
  loanResponseSchema,
  promiseToPayResponseSchema,
  type RecordPaymentResponse,
  type RecordPaymentsResponse,
  type ReversePaymentResponse,
  recordPaymentResponseSchema,
  recordPaymentsResponseSchema,
  reversePaymentResponseSchema,
} from '@lendlock/contract';
import { type ApiClient, ApiError } from './client';
import { withTimeZone } from './timeZone';

export const loanKeys = {
  all: ['loans'] as const,
  ofImei: (imei: string) => [...loanKeys.all, 'imei', { imei }] as const,
  ofRef: (loanRef: string) => [...loanKeys.all, 'ref', { loanRef }] as const,
};

/** A device's loan (its open one, else its latest), or a loan by its ref; null when there is none. */
export async function fetchLoan(
  api: ApiClient,
  which: { imei: string } | { loanRef: string },
  signal?: AbortSignal,
): Promise<LoanView | null> {
  try {
    const reply = await api.call('v2/loans/get', {
      body: withTimeZone(which),
      parse: (body) => loanResponseSchema.parse(body),
      ...(signal ? { signal } : {}),
    });
    return reply.loan;
  } catch (error) {
    if (error instanceof ApiError && error.status === 404) return null;
    throw error;
  }
}

export function uploadLoans(api: ApiClient, file: File, replace: boolean): Promise<ImportLoansResponse> {
  const form = new FormData();
  form.append('file', file, file.name);
  form.append('replace', replace ? 'true' : 'false');
  return api.call('v2/loans/upload', { body: form, parse: (body) => importLoansResponseSchema.parse(body) });
}

export function uploadPayments(api: ApiClient, file: File): Promise<RecordPaymentsResponse> {
  const form = new FormData();
  form.append('file', file, file.name);
  return api.call('v2/payments/upload', {
    body: form,
    parse: (body) => recordPaymentsResponseSchema.parse(body),
  });
}

export interface PaymentForm {
  paymentRef: string;
  loanRef: string;
  amount: string;
  /** YYYY-MM-DD or an ISO date-time with its offset. */
  paidAt: string;
  /** The loan's tenant, when the form belongs to a loan shown (a ref is unique per tenant only). */
  retailerPhone?: string | null;
}

export function recordPayment(api: ApiClient, payment: PaymentForm): Promise<RecordPaymentResponse> {
  return api.call('v2/payments', {
    body: withTimeZone(payment),
    parse: (body) => recordPaymentResponseSchema.parse(body),
  });
}

/** Reverses a payment by its ref, with the reason; the loan as it stands without it. */
export function reversePayment(
  api: ApiClient,
  request: { paymentRef: string; reason: string; retailerPhone?: string | null },
): Promise<ReversePaymentResponse> {
  return api.call('v2/payments/reverse', {
    body: withTimeZone(request),
    parse: (body) => reversePaymentResponseSchema.parse(body),
  });
}

export async function setPromiseToPay(
  api: ApiClient,
  request: { loanRef: string; until: string | null; retailerPhone?: string | null },
): Promise<{ message: string; loan: LoanView }> {
  const reply = await api.call('v2/loans/promise', {
    body: withTimeZone(request),
    parse: (body) => promiseToPayResponseSchema.parse(body),
  });
  return { message: reply.message, loan: reply.loan };
}
