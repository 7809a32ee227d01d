import { z } from 'zod';
import { isoDaySchema, timeZoneSchema } from '../dates';

/**
 * The SUPERADMIN's search of the append-only audit log. From and To are whole days in the
 * operator's time zone (`timeZone`, else the server's REPORT_TIMEZONE), the export's date cells its wall clock.
 */
export const auditSearchSchema = z.object({
  imei: z.string().trim().max(20).optional(),
  user: z.string().trim().max(254).optional(),
  /** The start of the action, e.g. `key.` or `command.LOCK`. */
  action: z.string().trim().max(64).optional(),
  from: isoDaySchema.optional(),
  to: isoDaySchema.optional(),
  timeZone: timeZoneSchema.optional(),
  offset: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(10_000).default(500),
});
export type AuditSearch = z.infer<typeof auditSearchSchema>;

export const auditRowSchema = z.object({
  id: z.number().int(),
  /** ISO 8601, UTC. */
  at: z.string(),
  actor: z.string(),
  action: z.string(),
  target: z.string().nullable(),
  address: z.string().nullable(),
  result: z.string(),
  /** The row's details as JSON text, or null. */
  details: z.string().nullable(),
});
export type AuditRow = z.infer<typeof auditRowSchema>;

export const auditSearchResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(auditRowSchema),
  /** Rows that match, counted up to 10,000 (then `totalCapped`: more than that match). */
  total: z.number().int(),
  /** True when more than `total` rows match (the count stops at 10,000; narrow the search or export). */
  totalCapped: z.boolean().optional(),
});
export type AuditSearchResult = z.infer<typeof auditSearchResponseSchema>;

/** The export's file name (the server sends it in content-disposition). */
export const auditExportFileName = (from?: string, to?: string) =>
  `audit-${from ?? 'all'}-${to ?? 'all'}.xlsx`;
