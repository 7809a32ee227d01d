/**
 * Uploaded batch files are kept UPLOAD_RETENTION, then deleted, so the uploads folder cannot grow
 * without end. Each instance sweeps its own DATA_DIR once at start and then every hour. A file goes when
 * it was written longer ago than the retention, and its batch records when (`file_removed_at`), so
 * the history link can say why it is gone. Uploads left half-received in DATA_DIR/incoming by a crash
 * go after a day. Files are found on disk, not in the database: with several instances and no shared
 * storage, each holds (and deletes) only the files it received.
 */
import type { Dirent } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyBaseLogger } from 'fastify';
import type { Kysely } from 'kysely';
import { asSystem } from '../../db/tenant';
import type { DB } from '../../db/types';
import { INCOMING_DIR } from '../../lib/upload';
import { markFilesRemoved } from './repository';

/** How often an instance sweeps (the retention is counted in days; an hour late is nothing). */
export const UPLOAD_SWEEP_INTERVAL_MS = 3_600_000;
/** A half-received upload older than this is a crash's leftover (an upload takes minutes at most). */
export const INCOMING_MAX_AGE_MS = 86_400_000;

export interface UploadSweepOptions {
  db: Kysely<DB>;
  dataDir: string;
  retentionMs: number;
  log: FastifyBaseLogger;
}

export interface UploadSweepResult {
  /** The files deleted, as `<feature>/<name>` (how batches and links name them). */
  removed: string[];
  /** Batches recorded as having lost their file. */
  marked: number;
  /** Half-received uploads deleted from DATA_DIR/incoming. */
  leftovers: number;
}

async function entries(dir: string): Promise<Dirent[]> {
  try {
    return await readdir(dir, { withFileTypes: true });
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT') return [];
    throw error;
  }
}

/** Deletes the files in `dir` last written before `cutoff` (ms); returns their names. */
async function removeOlder(dir: string, cutoff: number): Promise<string[]> {
  const removed: string[] = [];
  for (const entry of await entries(dir)) {
    if (!entry.isFile()) continue;
    const path = join(dir, entry.name);
    const stats = await stat(path).catch(() => null);
    if (!stats || stats.mtimeMs >= cutoff) continue;
    await rm(path, { force: true });
    removed.push(entry.name);
  }
  return removed;
}

/** One sweep. `now` (ms) is for tests; the files' ages come from the file system. */
export async function sweepUploads(
  options: UploadSweepOptions,
  now = Date.now(),
): Promise<UploadSweepResult> {
  const root = join(options.dataDir, 'uploads');
  const removed: string[] = [];
  for (const feature of await entries(root)) {
    if (!feature.isDirectory()) continue;
    for (const name of await removeOlder(join(root, feature.name), now - options.retentionMs))
      removed.push(`${feature.name}/${name}`);
  }
  const marked = removed.length > 0 ? await markFilesRemoved(options.db, removed) : 0;
  const leftovers = (await removeOlder(join(options.dataDir, INCOMING_DIR), now - INCOMING_MAX_AGE_MS))
    .length;
  if (removed.length > 0 || leftovers > 0)
    options.log.info(
      { removed: removed.length, marked, leftovers },
      'uploads sweep: deleted files past UPLOAD_RETENTION',
    );
  return { removed, marked, leftovers };
}

/** Sweeps now and every UPLOAD_SWEEP_INTERVAL_MS until `stop`, which waits for a sweep under way. */
export function startUploadSweeps(options: UploadSweepOptions): { stop(): Promise<void> } {
  let running: Promise<unknown> = Promise.resolve();
  const run = () => {
    running = asSystem(() => sweepUploads(options)).catch((error: unknown) =>
      options.log.error({ err: error }, 'uploads sweep failed'),
    );
  };
  run();
  const timer = setInterval(run, UPLOAD_SWEEP_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
