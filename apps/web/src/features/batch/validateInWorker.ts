/**
 * Validates a batch CSV in a Web Worker (csvWorker.ts), one worker per file, ended as soon as it has
 * answered or the file is no longer wanted (another file was chosen, the screen closed).
 */
import type { NotifyRow } from '@lendlock/contract';
import type { CsvSummary } from '../csv/ImeiCsvUpload';
import type { BatchKind } from './batchRules';

/** What the panel needs of a validated file: the counts and invalid rows, and a Notify file's rows. */
export interface BatchCsvCheck extends CsvSummary {
  /** The valid rows of a Notify file (for the File Preview); empty for an IMEI file. */
  rows: NotifyRow[];
}

export interface CsvWorkerRequest {
  file: File;
  kind: BatchKind;
}

export type CsvWorkerReply = { ok: true; check: BatchCsvCheck } | { ok: false; error: string };

export function validateInWorker(file: File, kind: BatchKind, signal?: AbortSignal): Promise<BatchCsvCheck> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL('./csvWorker.ts', import.meta.url), { type: 'module' });
    const end = () => {
      worker.terminate();
      signal?.removeEventListener('abort', abort);
    };
    const abort = () => {
      end();
      reject(signal?.reason ?? new DOMException('Aborted', 'AbortError'));
    };
    if (signal?.aborted) {
      abort();
      return;
    }
    signal?.addEventListener('abort', abort);
    worker.onmessage = ({ data }: MessageEvent<CsvWorkerReply>) => {
      end();
      if (data.ok) resolve(data.check);
      else reject(new Error(data.error));
    };
    worker.onerror = (event) => {
      end();
      reject(new Error(event.message || 'The CSV could not be read.'));
    };
    worker.postMessage({ file, kind } satisfies CsvWorkerRequest);
  });
}
