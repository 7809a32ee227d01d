import { z } from 'zod';
import { SINGLE_ACTIONS } from '../commands';

/** A batch's progress record, kept by the server (batches run there as durable jobs). */
export const batchProgressSchema = z.object({
  batchId: z.number().int(),
  statusOf: z.string(),
  command: z.string(),
  batchfilename: z.string().nullable(),
  /** 'complete' or 'incomplete' as the spec names it ('cancelled' for a discarded batch). */
  isComplete: z.enum(['complete', 'incomplete', 'cancelled']),
  /** running | paused | interrupted (its server stopped: resume with Process) | complete | cancelled */
  phase: z.enum(['running', 'paused', 'interrupted', 'complete', 'cancelled']),
  lastimei: z.string().nullable(),
  total: z.number().int(),
  valid: z.number().int(),
  invalid: z.number().int(),
  found: z.number().int(),
  notFound: z.number().int(),
  processed: z.number().int(),
  createdAt: z.string(),
  startedAt: z.string().nullable(),
  completedAt: z.string().nullable(),
  /** Processing time in ms (start to completion, or to now). */
  elapsedMs: z.number().int(),
  /**
   * Why the server paused it on its own, shown on the resume card and in the Reports history (e.g.
   * "Paused: the owner's account was disabled."); null for a batch paused by a person, or not paused.
   */
  pausedReason: z.string().nullable(),
});
export type BatchProgress = z.infer<typeof batchProgressSchema>;

export const bulkUploadResponseSchema = z.object({
  status: z.literal('success'),
  message: z.string(),
  batchId: z.number().int().nullable(),
  total: z.number().int(),
});

export const batchIdRequestSchema = z.object({ batchId: z.coerce.number().int().positive() });
export const batchProgressResponseSchema = z.object({
  status: z.literal('success'),
  batch: batchProgressSchema,
});
export const currentBatchRequestSchema = z.object({ statusOf: z.string().min(1).max(64) });
export const currentBatchResponseSchema = z.object({
  status: z.literal('success'),
  batch: batchProgressSchema.nullable(),
});

/** A batch's per-IMEI result (notify rows carry their fields too). */
export const batchResultSchema = z.object({
  sno: z.number().int(),
  imei: z.string(),
  validate: z.enum(['found', 'not found']).nullable(),
  note: z.string().nullable(),
  transactionId: z.string().nullable(),
  name: z.string().nullable(),
  amount: z.string().nullable(),
  date: z.string().nullable(),
  template: z.string().nullable(),
  header: z.string().nullable(),
  notification: z.string().nullable(),
});
export type BatchResult = z.infer<typeof batchResultSchema>;
/**
 * Why a batch row is 'not found' (its `note`): no device the batch's owner reaches has the IMEI (unknown, or
 * another retailer's: the same words, so existence is not leaked), the device was released, or it was
 * de-enrolled (formatted). docs/features.md § Deviations from the spec, point 9.
 */
export const BATCH_NOT_FOUND_REASONS = ['not registered', 'released', 'de-enrolled'] as const;
export type BatchNotFoundReason = (typeof BATCH_NOT_FOUND_REASONS)[number];
/** Which rows of a batch's results: all, the found ones, or the not found ones (of one `reason`). */
export const BATCH_RESULT_FILTERS = ['all', 'found', 'notFound'] as const;
export type BatchResultFilter = (typeof BATCH_RESULT_FILTERS)[number];
export const batchResultFilterSchema = z.enum(BATCH_RESULT_FILTERS);

/** The rows a results page or download holds: `reason` narrows `notFound` (and implies it). */
export const batchResultSelectionSchema = z.object({
  filter: batchResultFilterSchema.default('all'),
  reason: z.enum(BATCH_NOT_FOUND_REASONS).optional(),
});
export type BatchResultSelection = z.infer<typeof batchResultSelectionSchema>;

/** Keyset paging: the rows after S.No. `offset` (the last S.No. of the previous page), in S.No. order. */
export const batchResultsRequestSchema = batchResultSelectionSchema.extend({
  batchId: z.coerce.number().int().positive(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(100_000).default(10_000),
});
export const batchResultsResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(batchResultSchema),
  /** The rows of the selection: the batch's valid rows (all), its found or not found count, or the reason's. */
  total: z.number().int(),
});

/** The legacy per-IMEI call of the old browser-side batch loop (getimeidetails.php). */
export const imeiDetailsRequestSchema = z.object({
  imei: z.string().trim(),
  // Any other value is refused with 'Unknown action: …'; the document lists the values (OpenAPI enum).
  action: z.string().trim().meta({ enum: SINGLE_ACTIONS }),
  filename: z.string().max(255).optional(),
  user: z.string().optional(),
  message: z.string().max(2000).optional(),
  template: z.string().optional(),
  grade: z.enum(['level1', 'level2']).optional(),
  level: z.enum(['level1', 'level2']).optional(),
});
export const imeiDetailsResponseSchema = z.object({ message: z.enum(['found', 'not found']) });

export const updateStatusRequestSchema = z.object({
  lastimei: z.string().max(20).optional().default(''),
  fileName: z.string().max(255),
  isComplete: z.enum(['complete', 'incomplete']),
  statusOf: z.string().min(1).max(64),
  user: z.string().optional(),
});
export const updateCommandRequestSchema = z.object({
  imeilist: z.string().max(20_000_000),
  action: z.string().trim().meta({ enum: SINGLE_ACTIONS }),
  user: z.string().optional(),
});
