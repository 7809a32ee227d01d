/**
 * The batch panel's decisions, pure: which CSV a command takes, what it uploads
 * beside the file, what the panel shows for a batch's phase, what the resume card offers and whether a
 * stopped batch can be resumed, and the progress figures.
 */
import type { BatchKind, BatchProgress, BatchResult, CommandDefinition } from '@lendlock/contract';

/** Notify batches take the Notify CSV; every other command the IMEI CSV (the contract's `batchKindOf`). */
export type { BatchKind } from '@lendlock/contract';

export const batchKind = (definition: Pick<CommandDefinition, 'input'>): BatchKind =>
  definition.input === 'notify' ? 'notify' : 'imei';

/** The grade the graded batch needs before its file selector is enabled. */
export type BatchGrade = 'level1' | 'level2';

/**
 * The multipart `level`: the grade for Graded Disable App, `default` for the credit scripts,
 * nothing otherwise.
 */
export function uploadLevel(
  definition: Pick<CommandDefinition, 'input' | 'raw'>,
  grade: BatchGrade | '',
): string | undefined {
  if (definition.input === 'grade') return grade || undefined;
  if (definition.raw === 'ENABLECREDIT' || definition.raw === 'REVOKECREDIT') return 'default';
  return undefined;
}

/** What the resume card offers. */
export interface ResumeOptions {
  /** Cancel (hide the card for now) is absent on Notify and Set Wallpaper. */
  cancel: boolean;
  /** Set Wallpaper's Process first downloads the already-processed IMEIs as `{file}_processed.csv`. */
  processedDownload: boolean;
}

export function resumeOptions(definition: Pick<CommandDefinition, 'input' | 'raw'>): ResumeOptions {
  const setWallpaper = definition.raw === 'LOCKWALLPAPER';
  return { cancel: definition.input !== 'notify' && !setWallpaper, processedDownload: setWallpaper };
}

/**
 * What the panel shows for a batch it follows: running (the executing overlay with the progress bar),
 * resume (the 'Incomplete Batch Available' card: paused, or interrupted by a server stop), done (the
 * summary and results), or cancelled (discarded, e.g. from another tab: back to the upload card).
 */
export type PanelMode = 'running' | 'resume' | 'done' | 'cancelled';

export function panelMode(phase: BatchProgress['phase']): PanelMode {
  switch (phase) {
    case 'running':
      return 'running';
    case 'paused':
    case 'interrupted':
      return 'resume';
    case 'complete':
      return 'done';
    case 'cancelled':
      return 'cancelled';
  }
}

/** How often the panel reads a followed batch's progress: 500 ms while it runs, slower while it waits. */
export function progressPollMs(progress: Pick<BatchProgress, 'phase'> | undefined): number | false {
  if (progress === undefined) return 500;
  const mode = panelMode(progress.phase);
  if (mode === 'running') return 500;
  // A stopped batch is watched for another tab resuming it (and for a chunk that finishes after Pause).
  return mode === 'resume' ? 2_000 : false;
}

/**
 * The results page that holds the last processed IMEI when the server's invariants hold: rows are claimed
 * in S.No. order, so the last processed S.No. is at least `processed` and at most a few chunks beyond.
 */
export function lastImeiWindow(progress: Pick<BatchProgress, 'processed'>): {
  offset: number;
  limit: number;
} {
  return { offset: Math.max(0, progress.processed - 1), limit: 1_000 };
}

/**
 * Process: a batch resumes after its last processed IMEI, which must be among its processed
 * results; a batch that processed nothing yet resumes from the start.
 */
export function canResume(
  progress: Pick<BatchProgress, 'lastimei' | 'processed'>,
  results: readonly Pick<BatchResult, 'imei' | 'validate'>[],
): boolean {
  if (progress.lastimei === null) return progress.processed === 0;
  return results.some((result) => result.imei === progress.lastimei && result.validate !== null);
}

/** Percent of the valid rows processed, 0–100, for the progress bar. */
export function progressPercent(progress: Pick<BatchProgress, 'processed' | 'valid'>): number {
  if (progress.valid <= 0) return 0;
  return Math.min(100, Math.max(0, (progress.processed / progress.valid) * 100));
}

/** The batch summary (total, valid, invalid, found, not found), in that order. */
export function batchSummary(
  progress: Pick<BatchProgress, 'total' | 'valid' | 'invalid' | 'found' | 'notFound'>,
): { key: 'total' | 'valid' | 'invalid' | 'found' | 'notFound'; value: number }[] {
  return (['total', 'valid', 'invalid', 'found', 'notFound'] as const).map((key) => ({
    key,
    value: progress[key],
  }));
}
