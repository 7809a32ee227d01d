/**
 * The server's typed errors: a service or a repository throws one, and the error handler
 * (plugins/errors.ts) answers `{status: "error", code, message}` with its status and stable code.
 */
import type { ErrorCode } from '@lendlock/contract';

/** The message of every 5xx the server answers itself: what failed stays in the log. */
export const INTERNAL_MESSAGE = 'Something went wrong on our side. Please try again.';

export class AppError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: ErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    /** Extra fields of the error answer (e.g. the invalid rows of a CSV). */
    readonly extra: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const badRequest = (message: string) => new AppError(400, 'VALIDATION_FAILED', message);
export const forbidden = (message: string) => new AppError(403, 'FORBIDDEN', message);
export const notFound = (message: string) => new AppError(404, 'NOT_FOUND', message);
export const conflict = (message: string) => new AppError(409, 'CONFLICT', message);
