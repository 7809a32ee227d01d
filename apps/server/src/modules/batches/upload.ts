/**
 * A bulk upload: the file is kept (linked from the reports history) and validated again on the server
 * with the same contract validator the console uses.
 */
import { createReadStream, createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { MultipartFile } from '@fastify/multipart';
import { csvFileTypeError } from '@lendlock/contract';
import { AppError } from '../../plugins/errors';

export interface StoredUpload {
  fileName: string;
  path: string;
  /** Path relative to DATA_DIR/uploads, as the reports link it. */
  relative: string;
  bytes: number;
}

function safeName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? 'upload.csv';
  return base.replace(/[^A-Za-z0-9._-]+/g, '_').slice(-120) || 'upload.csv';
}

export async function storeUpload(
  file: MultipartFile,
  dataDir: string,
  feature: string,
): Promise<StoredUpload> {
  const typeError = csvFileTypeError({
    name: file.filename,
    type: file.mimetype === 'application/octet-stream' ? '' : file.mimetype,
  });
  if (typeError) {
    file.file.resume();
    throw new AppError(415, 'UNSUPPORTED_MEDIA_TYPE', typeError);
  }
  const dir = join(dataDir, 'uploads', feature);
  mkdirSync(dir, { recursive: true });
  const stored = `${new Date().toISOString().replace(/[:.]/g, '-')}-${safeName(file.filename)}`;
  const path = join(dir, stored);
  await pipeline(file.file, createWriteStream(path, { mode: 0o600 }));
  if (file.file.truncated) {
    throw new AppError(413, 'PAYLOAD_TOO_LARGE', 'The file is larger than the upload limit.');
  }
  return { fileName: file.filename, path, relative: `${feature}/${stored}`, bytes: file.file.bytesRead };
}

export function readStored(path: string) {
  return createReadStream(path, { encoding: 'utf8', highWaterMark: 1 << 20 });
}
