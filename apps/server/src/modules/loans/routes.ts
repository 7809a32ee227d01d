import {
  getLoanRequestSchema,
  importLoansRequestSchema,
  importLoansResponseSchema,
  LOAN_MESSAGES,
  loanResponseSchema,
  promiseToPayRequestSchema,
  promiseToPayResponseSchema,
  recordPaymentRequestSchema,
  recordPaymentResponseSchema,
  recordPaymentsResponseSchema,
  reversePaymentRequestSchema,
  reversePaymentResponseSchema,
  validateLoansCsv,
  validatePaymentsCsv,
} from '@lendlock/contract';
import type { FastifyRequest } from 'fastify';
import type { FastifyPluginAsyncZod } from 'fastify-type-provider-zod';
import { noObjectTouched } from '../../authz';
import type { RouteContext } from '../../core/context';
import { badRequest } from '../../core/errors';
import { requirePrincipal } from '../../core/principal';
import { type ReceivedUpload, readStored, receiveUpload, UPLOAD_MESSAGES } from '../../lib/upload';
import { refusedRows } from './service';

/**
 * A CSV upload (multipart: `file`, and text fields), received as a bulk upload is (lib/upload.ts:
 * its type, size and name checked, kept under DATA_DIR/incoming while it is read); `use` reads it, then the
 * file is deleted whatever happens (an import keeps its rows, not its file).
 */
async function withUploadedCsv<T>(
  request: FastifyRequest,
  dataDir: string,
  use: (path: string, fields: Record<string, string>) => Promise<T>,
): Promise<T> {
  if (!request.isMultipart()) throw badRequest(LOAN_MESSAGES.noFile);
  const fields: Record<string, string> = {};
  let upload: ReceivedUpload | null = null;
  try {
    for await (const part of request.parts()) {
      if (part.type !== 'file') fields[part.fieldname] = String(part.value ?? '');
      else if (part.fieldname !== 'file' || upload) part.file.resume();
      else upload = await receiveUpload(part, dataDir);
    }
    if (!upload) throw badRequest(LOAN_MESSAGES.noFile);
    return await use(upload.path, fields);
  } finally {
    upload?.discard();
  }
}

/**
 * Loans and payments (ADMIN and SUPERADMIN, a session or a key: import, record, reverse, promise; reading a
 * loan: Device Details' permission).
 */
export function loanRoutes(ctx: RouteContext): FastifyPluginAsyncZod {
  const { loans } = ctx;
  return async (app) => {
    const caller = (request: FastifyRequest) => ({ actor: requirePrincipal(request), address: request.ip });

    app.post(
      '/api/v2/loans',
      { schema: { body: importLoansRequestSchema, response: { 200: importLoansResponseSchema } } },
      async (request) => {
        const candidates = loans.checkRequest(request.body.loans);
        const source = requirePrincipal(request).credential === 'key' ? 'API' : 'CONSOLE';
        return loans.importLoans(caller(request), candidates, { replace: request.body.replace, source });
      },
    );

    app.post(
      '/api/v2/loans/upload',
      { schema: { response: { 200: importLoansResponseSchema } } },
      async (request) => {
        const who = caller(request);
        return withUploadedCsv(request, ctx.config.dataDir, async (path, fields) => {
          const checked = await validateLoansCsv(readStored(path));
          if (checked.total > ctx.config.batchMaxRows)
            throw badRequest(UPLOAD_MESSAGES.tooManyRows(ctx.config.batchMaxRows));
          if (checked.invalidCount > 0)
            throw refusedRows(LOAN_MESSAGES.loansIncorrect, checked.invalid, checked.invalidCount);
          if (checked.loans.length === 0) {
            noObjectTouched('a loans file without loans');
            return {
              status: 'success' as const,
              message: checked.note ?? LOAN_MESSAGES.imported(0, 0, 0),
              created: 0,
              replaced: 0,
              unchanged: 0,
            };
          }
          const replace = ['true', 'on', '1'].includes((fields.replace ?? '').trim().toLowerCase());
          return loans.importLoans(who, checked.loans, { replace, source: 'CSV' });
        });
      },
    );

    app.post(
      '/api/v2/loans/get',
      { schema: { body: getLoanRequestSchema, response: { 200: loanResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        loan: await loans.getLoan(requirePrincipal(request), request.body),
      }),
    );

    app.post(
      '/api/v2/loans/promise',
      { schema: { body: promiseToPayRequestSchema, response: { 200: promiseToPayResponseSchema } } },
      async (request) => ({
        status: 'success' as const,
        ...(await loans.setPromise(caller(request), request.body)),
      }),
    );

    app.post(
      '/api/v2/payments',
      { schema: { body: recordPaymentRequestSchema, response: { 200: recordPaymentResponseSchema } } },
      async (request) => {
        const recorded = await loans.recordPayment(caller(request), request.body);
        return {
          status: 'success' as const,
          message: recorded.duplicate ? LOAN_MESSAGES.paymentDuplicate : LOAN_MESSAGES.paymentRecorded,
          ...recorded,
        };
      },
    );

    app.post(
      '/api/v2/payments/reverse',
      { schema: { body: reversePaymentRequestSchema, response: { 200: reversePaymentResponseSchema } } },
      async (request) => {
        const reversed = await loans.reversePayment(caller(request), request.body);
        return {
          status: 'success' as const,
          message: reversed.duplicate ? LOAN_MESSAGES.paymentReversedBefore : LOAN_MESSAGES.paymentReversed,
          ...reversed,
        };
      },
    );

    app.post(
      '/api/v2/payments/upload',
      { schema: { response: { 200: recordPaymentsResponseSchema } } },
      async (request) => {
        const who = caller(request);
        return withUploadedCsv(request, ctx.config.dataDir, async (path) => {
          const checked = await validatePaymentsCsv(readStored(path));
          if (checked.total > ctx.config.batchMaxRows)
            throw badRequest(UPLOAD_MESSAGES.tooManyRows(ctx.config.batchMaxRows));
          if (checked.invalidCount > 0)
            throw refusedRows(LOAN_MESSAGES.paymentsIncorrect, checked.invalid, checked.invalidCount);
          if (checked.payments.length === 0) {
            noObjectTouched('a payments file without payments');
            return {
              status: 'success' as const,
              message: checked.note ?? LOAN_MESSAGES.paymentsRecorded(0, 0),
              recorded: 0,
              duplicates: 0,
            };
          }
          const { recorded, duplicates } = await loans.recordPayments(who, checked.payments);
          return {
            status: 'success' as const,
            message: LOAN_MESSAGES.paymentsRecorded(recorded, duplicates),
            recorded,
            duplicates,
          };
        });
      },
    );
  };
}
