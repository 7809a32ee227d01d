import { z } from 'zod';
import { sessionEndReasonSchema } from './auth';

/** Stable error codes carried by every error response (`code`), beside the human `message`. */
export const ERROR_CODES = [
  'VALIDATION_FAILED',
  'BAD_ENVELOPE',
  'UNAUTHENTICATED',
  'FORBIDDEN',
  'NOT_FOUND',
  /** A resource that existed and was removed (an uploaded file past UPLOAD_RETENTION): 410. */
  'GONE',
  'CONFLICT',
  'RATE_LIMITED',
  'PAYLOAD_TOO_LARGE',
  'UNSUPPORTED_MEDIA_TYPE',
  'UNAVAILABLE',
  'INTERNAL',
  'INVALID_CREDENTIALS',
  'ACCOUNT_DISABLED',
  'REREGISTRATION_NEEDS_APPROVAL',
  'IMEI_IN_USE',
  'ATTESTATION_REQUIRED',
  'MFA_ENROLMENT_REQUIRED',
  'MFA_CHALLENGE_EXPIRED',
  /** Too many wrong second-factor codes: no code passes until an administrator resets the account's MFA. */
  'MFA_LOCKED',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

export const errorResponseSchema = z.object({
  status: z.literal('error'),
  code: z.enum(ERROR_CODES),
  message: z.string(),
  /** On a 401 `UNAUTHENTICATED` for a console session the server knows: why it stopped working. */
  reason: sessionEndReasonSchema.optional(),
});
export type ErrorResponse = z.infer<typeof errorResponseSchema>;

/**
 * The answer to a file or a list whose rows were refused (400 VALIDATION_FAILED): a batch CSV, loans or
 * payments. Every bad row (a CSV's line, or an item's position in a JSON request) with its error, as
 * incorrect_data.csv lists them: at most the first 1,000, `invalidCount` counting them all.
 */
export const rowsRefusalSchema = z.object({
  status: z.literal('error'),
  code: z.literal('VALIDATION_FAILED'),
  message: z.string(),
  invalid: z.array(z.object({ line: z.number(), error: z.string(), data: z.string() })),
  invalidCount: z.number().int(),
  more: z.string().optional(),
});

/** The spec's `{status, message}` reply of most calls. */
export const statusMessageSchema = z.object({
  status: z.string(),
  message: z.string(),
});
export type StatusMessage = z.infer<typeof statusMessageSchema>;

/** `GET /config.json`: runtime configuration of the console, so one build serves any deployment. */
export const runtimeConfigSchema = z.object({
  apiBase: z.string(),
  keyApiBase: z.string(),
  productLabel: z.string(),
  envelopeKey: z.string(),
  sessionCheckIntervalMs: z.number().int().positive(),
  /**
   * SESSION_IDLE_TIMEOUT: a session unused this long ends; the console warns a minute before, counting
   * from its last call. Optional for a server that has none.
   */
  sessionIdleTimeoutMs: z.number().int().positive().optional(),
  /** For the Add/Edit User modals' domain check (the server checks again). */
  allowedEmailDomains: z.array(z.string()),
  passwordMinLength: z.number().int().positive(),
  /** The fixed client code the dynamic action table sends (`clientof`). */
  clientCode: z.string(),
});
export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;

export const API_BASE = '/api/';
export const KEY_API_BASE = '/keyapi/';
