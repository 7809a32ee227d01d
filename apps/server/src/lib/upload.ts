/**
 * A bulk upload: received into `DATA_DIR/incoming/` under a private name, validated there with the same
 * contract validator the console uses, and only then, once its batch is accepted, moved to
 * `DATA_DIR/uploads/<feature>/`, where the reports history links to it. A refused upload (too large, not
 * a CSV, bad rows, no rows, someone else's `user` field) is deleted. It never reaches the uploads
 * folder: a 100 MB file refused with 413 used to stay there. What a crash leaves in `incoming/` is
 * removed by the uploads sweep (modules/uploads/retention.ts).
 */
import { randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import { csvFileTypeError, TEXT_MESSAGES, unstorableText } from '@lendlock/contract';
import { AppError, badRequest } from '../core/errors';

export const UPLOAD_MESSAGES = {
  tooLarge: 'The file is larger than the upload limit.',
  tooManyRows: (max: number) => `The file has more than ${max.toLocaleString('en-US')} rows.`,
} as const;

/** Where uploads wait while they are validated (beside `uploads/`, so keeping one is a rename). */
export const INCOMING_DIR = 'incoming';

export interface StoredUpload {
  fileName: string;
  path: string;
  /** Path relative to DATA_DIR/uploads, as the reports link it. */
  relative: string;
  bytes: number;
}

/** An upload received and not yet kept: validate `path`, then `keep` it or `discard` it. */
export interface ReceivedUpload {
  /** The name the client gave the file. */
  fileName: string;
  /** The file while it waits, under DATA_DIR/incoming. */
  path: string;
  bytes: number;
  /**
   * Moves the file to DATA_DIR/uploads/<feature>/<random>-<name>, where the history links to it: 128
   * random bits that nobody can guess (the link is served only to who may read the batch, too).
   */
  keep(feature: string): StoredUpload;
  /** Deletes the file wherever it is (waiting or kept); safe to call more than once. */
  discard(): void;
}

/** A file name made of letters, digits, `.`, `_` and `-`, never starting with a dot. */
export function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'upload.csv';
  // A leading dot would make a hidden file (or '..'); the stored name never starts with one.
  return (
    base
      .replace(/[^A-Za-z0-9._-]+/g, '_')
      .replace(/^\.+/, '')
      .slice(-120) || 'upload.csv'
  );
}

const isTooLarge = (error: unknown) => (error as { code?: unknown }).code === 'FST_REQ_FILE_TOO_LARGE';

/** Receives the file part of a bulk upload (its type checked first) into DATA_DIR/incoming. */
export async function receiveUpload(file: MultipartFile, dataDir: string): Promise<ReceivedUpload> {
  const typeError = csvFileTypeError({
    name: file.filename,
    type: file.mimetype === 'application/octet-stream' ? '' : file.mimetype,
  });
  if (typeError) {
    file.file.resume();
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', typeError);
  }
  // The name is kept with the batch: text the database cannot store is refused (it was a 500).
  const nameProblem = unstorableText(file.filename);
  if (nameProblem) {
    file.file.resume();
    throw badRequest(TEXT_MESSAGES[nameProblem]('file name'));
  }
  const incoming = join(dataDir, INCOMING_DIR);
  mkdirSync(incoming, { recursive: true });
  let path = join(incoming, `${randomBytes(12).toString('hex')}.part`);
  const discard = () => rmSync(path, { force: true });
  try {
    await pipeline(file.file, createWriteStream(path, { mode: 0o600 }));
  } catch (error) {
    discard();
    if (isTooLarge(error)) throw new AppError(413, 'PAYLOAD_TOO_LARGE', UPLOAD_MESSAGES.tooLarge);
    throw error;
  }
  if (file.file.truncated) {
    discard();
    throw new AppError(413, 'PAYLOAD_TOO_LARGE', UPLOAD_MESSAGES.tooLarge);
  }
  const bytes = file.file.bytesRead;
  return {
    fileName: file.filename,
    get path() {
      return path;
    },
    bytes,
    discard,
    keep(feature) {
      const dir = join(dataDir, 'uploads', feature);
      mkdirSync(dir, { recursive: true });
      const name = safeName(file.filename).slice(-100);
      let stored = `${randomBytes(16).toString('hex')}-${name}`;
      while (existsSync(join(dir, stored))) stored = `${randomBytes(16).toString('hex')}-${name}`;
      const kept = join(dir, stored);
      renameSync(path, kept);
      path = kept;
      return { fileName: file.filename, path: kept, relative: `${feature}/${stored}`, bytes };
    },
  };
}

export function readStored(path: string) {
  return createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
}
