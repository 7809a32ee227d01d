/**
 * Loans and payments (docs/features.md § Loans and payments): an ADMIN or SUPERADMIN (in the console, or
 * with a key) imports loan schedules and records payments; anyone who may open Device Details reads a
 * device's loan. Amounts are sent as decimal text in the loan's currency and answered in minor units
 * (`*Minor`, integers) with the currency, which `formatAmount` turns back into text.
 */
import { z } from 'zod';
import { isoDaySchema, timeZoneSchema } from '../dates';
import { LOAN_MESSAGES } from '../messages';

/** Shapes only: the rules and their messages are the contract's (loans.ts), applied by the server. */
const text = (max: number) => z.string().max(max);

/**
 * The tenant whose reference a lender-wide call means (docs/tenancy.md): a `loan_ref` or `payment_ref` is
 * unique per tenant, so two retailers (or a retailer and the lender) may use the same one. A retailer's
 * user never needs it (its own are meant); the lender's user sends it when the reference is used by more
 * than one tenant (the answer says so: 409): a retailer's phone, or null for the lender's own.
 */
const tenantOfRefSchema = z.string().trim().max(20).nullable().optional();

export const loanInstalmentInputSchema = z.object({
  /** YYYY-MM-DD. */
  dueDate: text(10),
  /** Decimal text in the loan's currency, e.g. "1499.50". */
  amount: text(24),
});

export const loanInputSchema = z.object({
  /** The lender's own id of the loan. */
  loanRef: text(100),
  /** The device's IMEI (either of its two). */
  imei: text(15),
  customerName: text(200),
  /** ISO 4217, e.g. INR. */
  currency: text(3),
  /** In order: instalment 1 first; each falls due after the one before. */
  instalments: z.array(loanInstalmentInputSchema).min(1).max(600),
});
export type LoanInput = z.infer<typeof loanInputSchema>;

/** The most loans one `POST /api/v2/loans` takes (a bigger import goes through the CSV upload). */
export const MAX_LOANS_PER_REQUEST = 1000;

/** `POST /api/v2/loans`: loans to import, all or none. */
export const importLoansRequestSchema = z.object({
  loans: z.array(loanInputSchema).min(1).max(MAX_LOANS_PER_REQUEST),
  /** Replace the schedule of a loan_ref imported before with a different one (payments are re-applied). */
  replace: z.boolean().optional().default(false),
});
export type ImportLoansRequest = z.input<typeof importLoansRequestSchema>;

export const LOAN_IMPORT_RESULTS = ['created', 'replaced', 'unchanged'] as const;
export type LoanImportResult = (typeof LOAN_IMPORT_RESULTS)[number];

export const importLoansResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  created: z.number().int(),
  replaced: z.number().int(),
  unchanged: z.number().int(),
});
export type ImportLoansResponse = z.infer<typeof importLoansResponseSchema>;

export const PAYMENT_SOURCES = ['API', 'CSV', 'CONSOLE'] as const;
export type PaymentSourceName = (typeof PAYMENT_SOURCES)[number];

/** `POST /api/v2/payments`: one payment, idempotent by `paymentRef`. */
export const recordPaymentRequestSchema = z.object({
  /** The lender's own id of the payment: the same payment sent again is recorded once. */
  paymentRef: text(100),
  loanRef: text(100),
  /** The loan's tenant, when its loanRef is used by more than one (lender-wide callers only). */
  retailerPhone: tenantOfRefSchema,
  /** Decimal text in the loan's currency. */
  amount: text(24),
  /** When the customer paid: a day (00:00 UTC) or a date-time with its offset. */
  paidAt: text(40),
  /** The loan's currency, when the sender wants it checked. */
  currency: text(3).optional(),
  /** The answer's loan summary is for today in this zone (default REPORT_TIMEZONE). */
  timeZone: timeZoneSchema.optional(),
});
export type RecordPaymentRequest = z.infer<typeof recordPaymentRequestSchema>;

export const loanPaymentSchema = z.object({
  paymentRef: z.string(),
  amountMinor: z.number().int(),
  paidAt: z.string(),
  receivedAt: z.string(),
  source: z.enum(PAYMENT_SOURCES).nullable(),
  recordedBy: z.string().nullable(),
  /** When it was reversed (a chargeback, a bounced transfer), by whom and why; null: it stands. */
  reversedAt: z.string().nullable(),
  reversedBy: z.string().nullable(),
  reversalReason: z.string().nullable(),
});
export type LoanPayment = z.infer<typeof loanPaymentSchema>;

export const loanInstalmentSchema = z.object({
  seq: z.number().int(),
  dueDate: z.string(),
  amountMinor: z.number().int(),
  paidMinor: z.number().int(),
  /** When it was paid in full. */
  paidAt: z.string().nullable(),
});
export type LoanInstalment = z.infer<typeof loanInstalmentSchema>;

/** Where the loan stands on `asOf` (loans.ts `loanPosition`, plus the credit and the last payment). */
export const loanSummarySchema = z.object({
  /** The day it is computed for, YYYY-MM-DD in `timeZone`. */
  asOf: z.string(),
  timeZone: z.string(),
  totalMinor: z.number().int(),
  paidMinor: z.number().int(),
  outstandingMinor: z.number().int(),
  arrearsMinor: z.number().int(),
  /** Payments (those that stand, not reversed) beyond the whole schedule. */
  creditMinor: z.number().int(),
  daysOverdue: z.number().int(),
  overdueSince: z.string().nullable(),
  instalmentsPaid: z.number().int(),
  instalmentsUnpaid: z.number().int(),
  nextDue: z.object({ seq: z.number().int(), dueDate: z.string(), amountMinor: z.number().int() }).nullable(),
  /** The latest payment that stands (not reversed). */
  lastPayment: loanPaymentSchema.nullable(),
});
export type LoanSummary = z.infer<typeof loanSummarySchema>;

export const loanViewSchema = z.object({
  loanRef: z.string(),
  /** The tenant of its references (its device's retailer; null: the lender's own): refs are unique per tenant. */
  retailerPhone: z.string().nullable(),
  /** The device's IMEI 1. */
  imei: z.string(),
  customerName: z.string(),
  currency: z.string(),
  status: z.enum(['OPEN', 'PAID']),
  /** No automated lock up to and including this day. */
  promiseToPayUntil: z.string().nullable(),
  createdAt: z.string(),
  createdBy: z.string().nullable(),
  summary: loanSummarySchema,
  instalments: z.array(loanInstalmentSchema),
  /** The latest 100 payments, latest first (by paid_at), reversed ones too (marked so). */
  payments: z.array(loanPaymentSchema),
});
export type LoanView = z.infer<typeof loanViewSchema>;

export const recordPaymentResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  /** True when this payment_ref was recorded before with the same loan and amount: nothing changed. */
  duplicate: z.boolean(),
  payment: loanPaymentSchema,
  loan: loanViewSchema,
});
export type RecordPaymentResponse = z.infer<typeof recordPaymentResponseSchema>;

/**
 * `POST /api/v2/payments/reverse`: a payment recorded before is reversed (a chargeback, a bounced
 * transfer) by its ref, with the reason. It is kept, marked reversed, and counts nowhere from then on: the
 * loan's instalments are allocated again without it (a PAID loan may be OPEN again). Reversing it again
 * changes nothing (`duplicate: true`).
 */
export const reversePaymentRequestSchema = z.object({
  paymentRef: text(100),
  reason: z.string().trim().min(1, LOAN_MESSAGES.reversalReason).max(500),
  /** The payment's tenant, when its paymentRef is recorded by more than one (lender-wide callers only). */
  retailerPhone: tenantOfRefSchema,
  /** The answer's loan summary is for today in this zone (default REPORT_TIMEZONE). */
  timeZone: timeZoneSchema.optional(),
});
export type ReversePaymentRequest = z.infer<typeof reversePaymentRequestSchema>;

export const reversePaymentResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  /** True when the payment was reversed before: nothing changed. */
  duplicate: z.boolean(),
  payment: loanPaymentSchema,
  loan: loanViewSchema,
});
export type ReversePaymentResponse = z.infer<typeof reversePaymentResponseSchema>;

/** `POST /api/v2/payments/upload`: how many payments of the file were new, and how many recorded before. */
export const recordPaymentsResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  recorded: z.number().int(),
  duplicates: z.number().int(),
});
export type RecordPaymentsResponse = z.infer<typeof recordPaymentsResponseSchema>;

/** `POST /api/v2/loans/get`: a device's loan (its open one, else its latest), by IMEI or by loan_ref. */
export const getLoanRequestSchema = z
  .object({
    imei: z
      .string()
      .regex(/^\d{15}$/, 'expected 15 digits.')
      .optional(),
    loanRef: text(100).optional(),
    /** With loanRef: the loan's tenant, when its loanRef is used by more than one (lender-wide callers). */
    retailerPhone: tenantOfRefSchema,
    /** The day the summary is for is today in this zone (default REPORT_TIMEZONE). */
    timeZone: timeZoneSchema.optional(),
  })
  .refine((body) => (body.imei === undefined) !== (body.loanRef === undefined), {
    message: 'give either imei or loanRef.',
  });
export type GetLoanRequest = z.infer<typeof getLoanRequestSchema>;

export const loanResponseSchema = z.object({ status: z.literal('success'), loan: loanViewSchema });

/** `POST /api/v2/loans/promise`: set (a day, today to 90 days ahead) or clear (null) a promise to pay. */
export const promiseToPayRequestSchema = z.object({
  loanRef: text(100),
  /** The loan's tenant, when its loanRef is used by more than one (lender-wide callers only). */
  retailerPhone: tenantOfRefSchema,
  until: isoDaySchema.nullable(),
  /** "Today" is today in this zone (default REPORT_TIMEZONE). */
  timeZone: timeZoneSchema.optional(),
});
export type PromiseToPayRequest = z.infer<typeof promiseToPayRequestSchema>;

export const promiseToPayResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  loan: loanViewSchema,
});
