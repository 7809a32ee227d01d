/**
 * Loans and payments (docs/features.md § Loans and payments): the rules. An ADMIN or SUPERADMIN, or a key
 * acting for one, imports loans (all or none: a bad loan refuses the import with every bad row, as the spec's
 * batch screens refuse a file), records payments (once per payment_ref; by the API, a CSV or the console),
 * reverses them (a chargeback, a bounced transfer) and sets a promise to pay; anyone who may open Device
 * Details reads a device's loan. Every method asks the authority module (authz/resources/loans.ts,
 * payments.ts) with the loan in hand: a retailer's user reaches only the loans of that retailer's devices,
 * another retailer's IMEI, loan or payment is not found, exactly as an unknown one. References are the
 * tenant's own (migration 0033): a retailer's look-up by ref reads its own refs only, so another tenant's
 * ref is unused for it; a lender-wide one that finds the ref at two tenants answers 409, asking for the
 * tenant (`retailerPhone`), and never picks one. Every change is audited.
 */
import {
  type CheckedLoan,
  type CsvPayment,
  checkLoanInput,
  dayInTimeZone,
  type ImportLoansResponse,
  type InvalidRow,
  LOAN_MESSAGES,
  type LoanInput,
  type LoanPayment,
  type LoanView,
  MAX_INVALID_ROWS,
  MESSAGES,
  paidAtProblem,
  parseAmount,
  parsePaidAt,
  promiseProblem,
  REPORT_TRUNCATION,
  type RecordPaymentRequest,
  type ReversePaymentRequest,
} from '@lendlock/contract';
import type { Kysely, Transaction } from 'kysely';
import { authorize, may, mayIfFound, scopeFor } from '../../authz';
import type { Tenant } from '../../authz/tenancy';
import { AppError, badRequest, conflict, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB, PaymentSource } from '../../db/types';
import { type AuditValues, appendAudit, appendAuditRows, auditValues } from '../audit/repository';
import {
  allocateToInstalments,
  devicesOfImeis,
  insertLoans,
  insertPayment,
  instalmentsOf,
  loanOfImei,
  loansByRefs,
  loansOfRef,
  loanViewById,
  lockImports,
  lockLoansByRef,
  lockPaymentsByRef,
  markReversed,
  type NewLoan,
  openLoansOfImeis,
  type PaymentRow,
  paymentByRef,
  paymentView,
  type RefTenants,
  reapplyPayments,
  refKey,
  replaceLoan,
  setPromise,
  settleStatus,
} from './repository';

export interface Caller {
  actor: Principal;
  address: string;
}

/**
 * A loan to import: checked fields, and where it came from (a CSV line, or its place in a request). The
 * contract's `CsvLoan` is one.
 */
export interface LoanCandidate extends CheckedLoan {
  line: number;
  data: string;
}

export interface LoanServiceOptions {
  db: Kysely<DB>;
  /** The zone of "today" when a call names none (REPORT_TIMEZONE). */
  defaultTimeZone: string;
}

/** Who wrote a row: the user's email, and the key when one acted for them. */
function actorLabel(actor: Principal): string {
  return actor.keyId === undefined ? actor.email : `${actor.email} (key ${actor.keyId})`;
}

/**
 * Whose references a look-up by ref reads: the tenant the request names (`retailerPhone`; null or '' the
 * lender's own), when the principal may name it, else null (nothing is found: as an unknown ref); with
 * none named, the principal's scope: a retailer's own, the lender's every tenant's ('any').
 */
function refTenants(actor: Principal, named: string | null | undefined): RefTenants | null {
  if (named === undefined) {
    const scope = scopeFor(actor, 'loans');
    return scope.retailerPhone === null ? 'any' : { tenant: scope.retailerPhone };
  }
  const tenant: Tenant = named === null || named.trim() === '' ? null : named.trim();
  return may(actor, 'loans', 'nameTenant', { retailerPhone: tenant }) ? { tenant } : null;
}

/** The refusal of loans or payments: 400 with every bad row (at most the first 1,000, counted beyond). */
export function refusedRows(message: string, rows: readonly InvalidRow[], count = rows.length): AppError {
  const sorted = [...rows].sort((a, b) => a.line - b.line);
  const listed = sorted.slice(0, MAX_INVALID_ROWS);
  const more = count - listed.length;
  return new AppError(
    400,
    'VALIDATION_FAILED',
    message,
    {},
    {
      invalid: listed,
      invalidCount: count,
      ...(more > 0 ? { more: REPORT_TRUNCATION.moreRows(more) } : {}),
    },
  );
}

export interface PaymentInput {
  paymentRef: string;
  loanRef: string;
  /** The loan's tenant, when a lender-wide caller names it (RecordPaymentRequest). */
  retailerPhone?: string | null | undefined;
  amount: string;
  paidAt: string;
  currency?: string | undefined;
}

type PaymentOutcome =
  | { ok: true; duplicate: boolean; payment: PaymentRow; loanId: number; imei: string }
  | { ok: false; status: 400 | 404 | 409; message: string };

export class LoanService {
  constructor(private readonly options: LoanServiceOptions) {}

  /** Today (YYYY-MM-DD) in `timeZone`, else in the server's default zone. */
  today(timeZone?: string, now: Date = new Date()): { day: string; timeZone: string } {
    const zone = timeZone && dayInTimeZone(timeZone, now) ? timeZone : this.options.defaultTimeZone;
    return { day: dayInTimeZone(zone, now) as string, timeZone: zone };
  }

  /** The loans of a JSON request, checked field by field: the candidates, or a refusal with every bad loan. */
  checkRequest(loans: readonly LoanInput[]): LoanCandidate[] {
    const invalid: InvalidRow[] = [];
    const candidates: LoanCandidate[] = [];
    const positions = new Map<string, number>();
    loans.forEach((input, i) => {
      const checked = checkLoanInput(input);
      const errors = checked.errors ? [...checked.errors] : [];
      const ref = input.loanRef.trim();
      const earlier = positions.get(ref);
      if (earlier !== undefined) errors.push(LOAN_MESSAGES.loanRepeated(earlier));
      else positions.set(ref, i + 1);
      const data = input.loanRef.slice(0, 100);
      if (errors.length > 0 || !checked.loan)
        invalid.push({ line: i + 1, error: MESSAGES.notifyIncorrectFields(errors.join(', ')), data });
      else candidates.push({ ...checked.loan, line: i + 1, data });
    });
    if (invalid.length > 0) throw refusedRows(LOAN_MESSAGES.loansIncorrect, invalid);
    return candidates;
  }

  /**
   * Imports loans, all or none, in one transaction under the import lock: each is new (its device has no
   * open loan), the same as the one imported under its ref (nothing changes), or, with `replace`, a new
   * schedule for it (its payments applied again). Anything else refuses the whole import with its rows.
   */
  async importLoans(
    { actor, address }: Caller,
    candidates: readonly LoanCandidate[],
    options: { replace: boolean; source: 'API' | 'CSV' | 'CONSOLE' },
  ): Promise<ImportLoansResponse> {
    return inTransaction(this.options.db, async (trx) => {
      await lockImports(trx);
      const devices = await devicesOfImeis(
        trx,
        candidates.map((c) => c.imei),
      );
      const existing = await loansByRefs(
        trx,
        candidates.map((c) => c.loanRef),
      );
      const open = await openLoansOfImeis(
        trx,
        [...devices.values()].map((d) => d.imei1),
      );
      const invalid: InvalidRow[] = [];
      const created: NewLoan[] = [];
      const replaced: { id: number; loan: NewLoan }[] = [];
      let unchanged = 0;
      /** imei1 → the loan_ref of this import that takes it. */
      const claimed = new Map<string, string>();
      for (const candidate of candidates) {
        const refuse = (error: string) => invalid.push({ line: candidate.line, error, data: candidate.data });
        const device = devices.get(candidate.imei);
        // The loan's tenant is its device's: another tenant's device is unknown, as an unregistered one.
        if (!mayIfFound(actor, 'loans', 'manage', device, (x) => ({ retailerPhone: x.retailerPhone }))) {
          refuse(LOAN_MESSAGES.unknownImei);
          continue;
        }
        const loan: NewLoan = { ...candidate, imei1: device.imei1, tenant: device.retailerPhone };
        const taken = claimed.get(device.imei1);
        if (taken !== undefined && taken !== candidate.loanRef) {
          refuse(LOAN_MESSAGES.imeiRepeated(taken));
          continue;
        }
        claimed.set(device.imei1, candidate.loanRef);
        // Its ref among its tenant's only: another tenant's same ref is another loan, and not shown.
        const stored = existing.get(refKey(loan.tenant, candidate.loanRef));
        if (stored) {
          // Its tenant's ref on a device that has moved to another retailer since: in use, not shown.
          if (!may(actor, 'loans', 'manage', { retailerPhone: stored.retailerPhone })) {
            refuse(LOAN_MESSAGES.loanRefInUse);
            continue;
          }
          const same =
            stored.imei === loan.imei1 &&
            stored.customerName === loan.customerName &&
            stored.currency.trim() === loan.currency &&
            stored.instalments.length === loan.instalments.length &&
            stored.instalments.every(
              (i, n) =>
                i.dueDate === loan.instalments[n]?.dueDate &&
                i.amountMinor === loan.instalments[n]?.amountMinor,
            );
          if (same) unchanged++;
          else if (!options.replace) refuse(LOAN_MESSAGES.scheduleDiffers);
          else {
            const other = open.get(loan.imei1);
            if (other !== undefined && other !== candidate.loanRef)
              refuse(LOAN_MESSAGES.openLoanExists(other));
            else replaced.push({ id: stored.id, loan });
          }
          continue;
        }
        if (device.claimstatus === 'RELEASED') {
          refuse(LOAN_MESSAGES.deviceReleased);
          continue;
        }
        const other = open.get(loan.imei1);
        if (other !== undefined) {
          refuse(LOAN_MESSAGES.openLoanExists(other));
          continue;
        }
        created.push(loan);
      }
      if (invalid.length > 0) throw refusedRows(LOAN_MESSAGES.loansIncorrect, invalid);
      await insertLoans(trx, created, actorLabel(actor));
      for (const { id, loan } of replaced) await replaceLoan(trx, id, loan);
      const audit = (loan: NewLoan, result: 'created' | 'replaced'): AuditValues =>
        auditValues({
          actor,
          action: 'loan.import',
          target: loan.imei1,
          address,
          result: 'success',
          details: {
            loanRef: loan.loanRef,
            [result]: true,
            source: options.source,
            currency: loan.currency,
            instalments: loan.instalments.length,
            totalMinor: loan.instalments.reduce((sum, i) => sum + i.amountMinor, 0),
          },
        });
      await appendAuditRows(trx, [
        ...created.map((loan) => audit(loan, 'created')),
        ...replaced.map(({ loan }) => audit(loan, 'replaced')),
      ]);
      return {
        status: 'success' as const,
        message: LOAN_MESSAGES.imported(created.length, replaced.length, unchanged),
        created: created.length,
        replaced: replaced.length,
        unchanged,
      };
    });
  }

  /**
   * One payment in the caller's transaction: its loan locked, the payment_ref recorded once (the same
   * ref with the same loan and amount is the payment recorded before; with anything else, a conflict),
   * allocated oldest instalment first, the loan PAID once every instalment is. Answers the outcome rather
   * than throwing, so a CSV can report each row.
   */
  private async recordOne(
    trx: Transaction<DB>,
    caller: Caller,
    input: PaymentInput,
    source: PaymentSource,
  ): Promise<PaymentOutcome> {
    // What the request alone shows wrong is answered first (400), whatever the loan.
    const timeProblem = paidAtProblem(input.paidAt);
    if (timeProblem) return { ok: false, status: 400, message: timeProblem };
    const tenants = refTenants(caller.actor, input.retailerPhone);
    const found = tenants === null ? [] : await lockLoansByRef(trx, input.loanRef.trim(), tenants);
    if (found.length > 1) return { ok: false, status: 409, message: LOAN_MESSAGES.loanRefAmbiguous };
    const loan = found[0];
    if (!mayIfFound(caller.actor, 'payments', 'record', loan, (x) => ({ retailerPhone: x.retailer_phone })))
      return { ok: false, status: 404, message: LOAN_MESSAGES.unknownLoan };
    const currency = loan.currency.trim();
    if (input.currency !== undefined && input.currency.trim() !== currency)
      return {
        ok: false,
        status: 400,
        message: LOAN_MESSAGES.currencyMismatch(input.currency.trim(), currency),
      };
    const amount = parseAmount(input.amount, currency);
    if (!amount.ok) return { ok: false, status: 400, message: amount.message };
    const paidAt = parsePaidAt(input.paidAt) as Date;
    const loanId = Number(loan.id);
    const payment = await insertPayment(trx, {
      loanId,
      paymentRef: input.paymentRef.trim(),
      amountMinor: amount.minor,
      paidAt,
      source,
      recordedBy: actorLabel(caller.actor),
      // A payment's ref is its loan's tenant's.
      tenant: loan.ref_tenant,
    });
    if (!payment) {
      const recorded = await paymentByRef(trx, input.paymentRef.trim(), loan.ref_tenant);
      if (recorded && recorded.loan_id === loanId && recorded.amount_minor === amount.minor)
        return { ok: true, duplicate: true, payment: recorded, loanId, imei: loan.imei };
      return { ok: false, status: 409, message: LOAN_MESSAGES.paymentConflict };
    }
    const creditMinor = await allocateToInstalments(trx, loanId, amount.minor, paidAt);
    const status = await settleStatus(trx, loanId);
    await appendAudit(trx, {
      actor: caller.actor,
      action: 'loan.payment',
      target: loan.imei,
      address: caller.address,
      result: 'success',
      details: {
        loanRef: loan.loan_ref,
        paymentRef: payment.payment_ref,
        amountMinor: amount.minor,
        currency,
        paidAt: paidAt.toISOString(),
        source,
        ...(creditMinor > 0 ? { creditMinor } : {}),
        ...(status === 'PAID' && loan.status !== 'PAID' ? { loanPaid: true } : {}),
      },
    });
    return { ok: true, duplicate: false, payment, loanId, imei: loan.imei };
  }

  /** A payment by the API or the console's form: recorded once per payment_ref; the loan as it now stands. */
  async recordPayment(
    caller: Caller,
    { timeZone, ...input }: RecordPaymentRequest,
  ): Promise<{ duplicate: boolean; payment: LoanPayment; loan: LoanView }> {
    const source: PaymentSource = caller.actor.credential === 'key' ? 'API' : 'CONSOLE';
    const outcome = await inTransaction(this.options.db, (trx) => this.recordOne(trx, caller, input, source));
    if (!outcome.ok) {
      if (outcome.status === 404) throw notFound(outcome.message);
      if (outcome.status === 409) throw conflict(outcome.message);
      throw badRequest(outcome.message);
    }
    const loan = (await loanViewById(this.options.db, outcome.loanId, this.today(timeZone))) as LoanView;
    return { duplicate: outcome.duplicate, payment: paymentView(outcome.payment), loan };
  }

  /**
   * The payments of a CSV, all or none, in one transaction and in file order, each as `recordPayment`
   * records one; a row that cannot be recorded refuses the file with every such row (incorrect_data.csv).
   */
  async recordPayments(
    caller: Caller,
    payments: readonly CsvPayment[],
  ): Promise<{ recorded: number; duplicates: number }> {
    return inTransaction(this.options.db, async (trx) => {
      const invalid: InvalidRow[] = [];
      let recorded = 0;
      let duplicates = 0;
      for (const payment of payments) {
        const outcome = await this.recordOne(trx, caller, payment, 'CSV');
        if (!outcome.ok) invalid.push({ line: payment.line, error: outcome.message, data: payment.data });
        else if (outcome.duplicate) duplicates++;
        else recorded++;
      }
      if (invalid.length > 0) throw refusedRows(LOAN_MESSAGES.paymentsIncorrect, invalid);
      return { recorded, duplicates };
    });
  }

  /**
   * Reverses a payment (a chargeback, a bounced transfer) by its ref, with the reason, in one transaction
   * with its loan's row locked: the payment is kept, marked reversed, and its loan's instalments are
   * allocated again from the payments that stand, so it counts no more in what is paid, the arrears or the
   * collections plan's recent payment; a PAID loan that is no longer paid is OPEN again (refused, changing
   * nothing, when its device has another open loan by then). What was sent to the device is not undone:
   * a release issued stays issued (docs/features.md § Loans and payments). A payment reversed before answers
   * `duplicate` and changes nothing; another retailer's payment is not found, as an unknown one.
   */
  async reversePayment(
    { actor, address }: Caller,
    { paymentRef, reason, timeZone, retailerPhone }: ReversePaymentRequest,
  ): Promise<{ duplicate: boolean; payment: LoanPayment; loan: LoanView }> {
    const outcome = await inTransaction(this.options.db, async (trx) => {
      // The import lock first, as an import takes it before its loans' rows: a paid loan opened again and
      // an import of another open loan for its device cannot pass each other.
      await lockImports(trx);
      const tenants = refTenants(actor, retailerPhone);
      const payments = tenants === null ? [] : await lockPaymentsByRef(trx, paymentRef.trim(), tenants);
      if (payments.length > 1) throw conflict(LOAN_MESSAGES.paymentRefAmbiguous);
      const found = payments[0];
      const unknown = () => notFound(LOAN_MESSAGES.unknownPayment);
      if (!found) throw unknown();
      authorize(actor, 'payments', 'reverse', { retailerPhone: found.loan.retailerPhone }, unknown);
      const loanId = found.payment.loan_id;
      if (found.payment.reversed_at !== null) return { duplicate: true, payment: found.payment, loanId };
      const payment = await markReversed(trx, found.payment.id, { by: actorLabel(actor), reason });
      await reapplyPayments(trx, loanId);
      const unpaid = (await instalmentsOf(trx, loanId)).some((i) => i.paidMinor < i.amountMinor);
      if (found.loan.status === 'PAID' && unpaid) {
        const other = (await openLoansOfImeis(trx, [found.loan.imei])).get(found.loan.imei);
        if (other !== undefined) throw conflict(LOAN_MESSAGES.reversalReopens(other));
      }
      const status = await settleStatus(trx, loanId);
      await appendAudit(trx, {
        actor,
        action: 'loan.payment.reverse',
        target: found.loan.imei,
        address,
        result: 'success',
        details: {
          loanRef: found.loan.loanRef,
          paymentRef: payment.payment_ref,
          amountMinor: payment.amount_minor,
          currency: found.loan.currency,
          paidAt: payment.paid_at.toISOString(),
          reason,
          ...(found.loan.status === 'PAID' && status === 'OPEN' ? { loanReopened: true } : {}),
        },
      });
      return { duplicate: false, payment, loanId };
    });
    const loan = (await loanViewById(this.options.db, outcome.loanId, this.today(timeZone))) as LoanView;
    return { duplicate: outcome.duplicate, payment: paymentView(outcome.payment), loan };
  }

  /** Sets (today to 90 days ahead, on an open loan) or clears a promise to pay. */
  async setPromise(
    { actor, address }: Caller,
    request: {
      loanRef: string;
      until: string | null;
      retailerPhone?: string | null | undefined;
      timeZone?: string | undefined;
    },
  ): Promise<{ message: string; loan: LoanView }> {
    const today = this.today(request.timeZone);
    const loanId = await inTransaction(this.options.db, async (trx) => {
      const tenants = refTenants(actor, request.retailerPhone);
      const found = tenants === null ? [] : await lockLoansByRef(trx, request.loanRef.trim(), tenants);
      if (found.length > 1) throw conflict(LOAN_MESSAGES.loanRefAmbiguous);
      const loan = found[0];
      const unknown = () => notFound(LOAN_MESSAGES.noLoan);
      if (!loan) throw unknown();
      authorize(actor, 'loans', 'manage', { retailerPhone: loan.retailer_phone }, unknown);
      if (request.until !== null) {
        if (loan.status === 'PAID') throw conflict(LOAN_MESSAGES.loanPaid);
        const problem = promiseProblem(request.until, today.day);
        if (problem) throw badRequest(problem);
      }
      await setPromise(trx, Number(loan.id), request.until);
      await appendAudit(trx, {
        actor,
        action: 'loan.promise',
        target: loan.imei,
        address,
        result: 'success',
        details: { loanRef: loan.loan_ref, until: request.until, previous: loan.promise },
      });
      return Number(loan.id);
    });
    const loan = (await loanViewById(this.options.db, loanId, today)) as LoanView;
    return {
      message:
        request.until === null ? LOAN_MESSAGES.promiseCleared : LOAN_MESSAGES.promiseSet(request.until),
      loan,
    };
  }

  /** A device's loan (by either IMEI) or a loan by its ref, as of today in `timeZone`. */
  async getLoan(
    actor: Principal,
    request: {
      imei?: string | undefined;
      loanRef?: string | undefined;
      retailerPhone?: string | null | undefined;
      timeZone?: string | undefined;
    },
  ): Promise<LoanView> {
    const at = this.today(request.timeZone);
    const { db } = this.options;
    const show = async (found: { id: number; retailerPhone: Tenant } | null | undefined, message: string) => {
      const unknown = () => notFound(message);
      if (!found) throw unknown();
      authorize(actor, 'loans', 'read', found, unknown);
      const loan = await loanViewById(db, found.id, at);
      if (!loan) throw unknown();
      return loan;
    };
    if (request.imei !== undefined)
      return show(await loanOfImei(db, request.imei), LOAN_MESSAGES.noLoanForImei);
    const tenants = refTenants(actor, request.retailerPhone);
    const found = tenants === null ? [] : await loansOfRef(db, (request.loanRef ?? '').trim(), tenants);
    if (found.length > 1) throw conflict(LOAN_MESSAGES.loanRefAmbiguous);
    return show(found[0], LOAN_MESSAGES.noLoan);
  }
}
