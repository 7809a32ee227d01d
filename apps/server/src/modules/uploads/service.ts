/**
 * The uploaded file a bulk-upload history row links to (`GET /api/v2/uploads/:feature/:file`). Only a
 * file some batch kept is served, and only to who may read that batch (authz/resources/uploads.ts, the
 * rule and the answers of `batch/results`); another tenant's file is not there, as an unknown name. A
 * file deleted after UPLOAD_RETENTION answers 410 with the reason, which the console shows in place of
 * the download.
 */
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { MESSAGES } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { may } from '../../authz';
import { AppError, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import type { DB } from '../../db/types';
import { formatDuration } from '../../lib/duration';
import { safeName } from '../../lib/upload';
import { BATCH_AUTHORITY_MESSAGES, batchObject } from '../batches/service';
import { findUploadBatch } from './repository';

export const UPLOAD_LINK_MESSAGES = {
  noSuchFile: 'No such file',
  removed: (retentionMs: number) =>
    `This file was removed after ${formatDuration(retentionMs)} (UPLOAD_RETENTION).`,
} as const;

export interface OpenedUpload {
  handle: FileHandle;
  /** The name to save it under: the name it was uploaded with (made safe for a header). */
  downloadName: string;
}

const gone = (retentionMs: number) => new AppError(410, 'GONE', UPLOAD_LINK_MESSAGES.removed(retentionMs));

/**
 * Opens the stored file `<feature>/<file>` for `actor`. The names were checked by the route's schema
 * (letters; a name without a leading dot), so the path stays inside DATA_DIR/uploads.
 */
export async function openUpload(
  db: Kysely<DB>,
  actor: Principal,
  where: { dataDir: string; retentionMs: number; feature: string; file: string },
): Promise<OpenedUpload> {
  const batch = await findUploadBatch(db, `${where.feature}/${where.file}`);
  if (!batch) throw notFound(UPLOAD_LINK_MESSAGES.noSuchFile);
  const object = batchObject(batch);
  if (!may(actor, 'uploads', 'read', object)) {
    if (!may(actor, 'uploads', 'see', object)) throw notFound(UPLOAD_LINK_MESSAGES.noSuchFile);
    if (!may(actor, 'uploads', 'use', object)) throw forbidden(MESSAGES.unauthorised);
    throw forbidden(BATCH_AUTHORITY_MESSAGES.notYours);
  }
  if (batch.file_removed_at) throw gone(where.retentionMs);
  let handle: FileHandle;
  try {
    handle = await open(join(where.dataDir, 'uploads', where.feature, where.file), 'r');
  } catch {
    // Deleted by another instance's sweep (shared storage) before this one recorded it, or kept by
    // another instance (no shared storage: operations.md, Uploads).
    if (new Date(batch.created_at).getTime() < Date.now() - where.retentionMs) throw gone(where.retentionMs);
    throw notFound(UPLOAD_LINK_MESSAGES.noSuchFile);
  }
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw notFound(UPLOAD_LINK_MESSAGES.noSuchFile);
  }
  return { handle, downloadName: safeName(batch.file_name ?? where.file) };
}
