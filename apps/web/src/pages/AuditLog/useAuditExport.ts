/**
 * Export: the search as the server's streamed xlsx, fetched with the session token and saved under the
 * server's file name, reporting its progress while it streams. Clear (or leaving the screen) stops it.
 */
import { useCallback, useEffect, useRef, useState } from 'react';
import { type AuditFilter, auditFileName, exportAudit } from '../../api/audit';
import type { FileProgress } from '../../api/reports';
import { useServices } from '../../app/services';
import { downloadBlob } from '../../features/csv/download';
import { failureMessage } from './auditLogForm';

export interface AuditExport {
  /** The export under way, or null. */
  progress: FileProgress | null;
  /** Why the last export failed, or null. */
  error: string | null;
  start(filter: AuditFilter): Promise<void>;
  /** Stops the export under way, if any, and forgets the last failure. */
  stop(): void;
}

export function useAuditExport(): AuditExport {
  const { config, sessions } = useServices();
  const [progress, setProgress] = useState<FileProgress | null>(null);
  const [error, setError] = useState<string | null>(null);
  const running = useRef<AbortController | null>(null);

  useEffect(() => () => running.current?.abort(), []);

  const stop = useCallback(() => {
    running.current?.abort();
    running.current = null;
    setProgress(null);
    setError(null);
  }, []);

  const start = useCallback(
    async (filter: AuditFilter) => {
      running.current?.abort();
      const controller = new AbortController();
      running.current = controller;
      setError(null);
      // Shown at once, while the server prepares the file; the server's name and sizes follow.
      setProgress({ fileName: auditFileName(filter), bytes: 0, totalRows: null });
      try {
        const file = await exportAudit({ config, sessions }, filter, {
          signal: controller.signal,
          onProgress: (next) => {
            if (running.current === controller) setProgress(next);
          },
        });
        if (!controller.signal.aborted) downloadBlob(file.blob, file.fileName);
      } catch (failure) {
        if (!controller.signal.aborted) setError(failureMessage(failure));
      } finally {
        if (running.current === controller) {
          running.current = null;
          setProgress(null);
        }
      }
    },
    [config, sessions],
  );

  return { progress, error, start, stop };
}
