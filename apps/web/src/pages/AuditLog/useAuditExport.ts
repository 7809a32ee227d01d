/**
 * Export: the search as the server's streamed xlsx, fetched with the session token and saved under the
 * server's file name (components/useDownload), reporting its progress while it streams. Clear (or
 * leaving the screen) stops it.
 */
import { useCallback, useState } from 'react';
import { type AuditFilter, auditFileName, exportAudit } from '../../api/audit';
import type { FileProgress } from '../../api/client';
import { useServices } from '../../app/services';
import { useDownload } from '../../components/useDownload';
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
  const { api } = useServices();
  const download = useDownload();
  const { run, stop: stopDownload } = download;
  const [error, setError] = useState<string | null>(null);

  const stop = useCallback(() => {
    stopDownload();
    setError(null);
  }, [stopDownload]);

  const start = useCallback(
    async (filter: AuditFilter) => {
      setError(null);
      try {
        await run(auditFileName(filter), (options) => exportAudit(api, filter, options));
      } catch (failure) {
        setError(failureMessage(failure));
      }
    },
    [api, run],
  );

  return { progress: download.progress, error, start, stop };
}
