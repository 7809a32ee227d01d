/**
 * The one way a screen downloads a file from the server (the reports' exports and upload links, the
 * audit log's export, the Audit Report's xlsx): fetched through `ApiClient.file` with an abort signal,
 * its progress shown while it streams, then saved under the server's name. Starting another download,
 * `stop()`, or leaving the screen aborts the one under way; an aborted download is neither saved nor
 * reported as a failure.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import type { DownloadedFile, FileCallOptions, FileProgress } from '../api/client';
import { downloadBlob } from '../features/csv/download';

type FileFetch = (options: Omit<FileCallOptions, 'fallbackName'>) => Promise<DownloadedFile>;

export interface Download {
  /** The download under way, or null. */
  progress: FileProgress | null;
  /**
   * Fetches and saves one file; `fileName` is shown at once, while the server prepares it. Resolves
   * true once saved, false when it was stopped; rejects with the failure otherwise.
   */
  run(fileName: string, fetchFile: FileFetch): Promise<boolean>;
  /** Stops the download under way, if any. */
  stop(): void;
}

export function useDownload(): Download {
  const [progress, setProgress] = useState<FileProgress | null>(null);
  const running = useRef<AbortController | null>(null);

  useEffect(() => () => running.current?.abort(), []);

  const stop = useCallback(() => {
    running.current?.abort();
    running.current = null;
    setProgress(null);
  }, []);

  const run = useCallback(async (fileName: string, fetchFile: FileFetch) => {
    running.current?.abort();
    const controller = new AbortController();
    running.current = controller;
    setProgress({ fileName, bytes: 0, totalRows: null });
    try {
      const file = await fetchFile({
        signal: controller.signal,
        onProgress: (next) => {
          if (running.current === controller) setProgress(next);
        },
      });
      if (controller.signal.aborted) return false;
      downloadBlob(file.blob, file.fileName);
      return true;
    } catch (error) {
      if (controller.signal.aborted) return false;
      throw error;
    } finally {
      if (running.current === controller) {
        running.current = null;
        setProgress(null);
      }
    }
  }, []);

  return { progress, run, stop };
}
