/**
 * Download and the bulk-upload history links: files fetched with the session token and saved under the
 * server's name. An export reports its progress while it streams; Cancel (or leaving the screen) stops it.
 * An uploaded file deleted after UPLOAD_RETENTION answers 410: its link then shows the server's reason
 * instead of a download that cannot happen.
 */
import { type ExportPart, exportFileName } from '@lendlock/contract';
import { useCallback, useEffect, useRef, useState } from 'react';
import { exportReport, type FileProgress, fetchUploadedFile, type ReportQuery } from '../../api/reports';
import { useServices } from '../../app/services';
import { downloadBlob } from '../../features/csv/download';
import { failureMessage, removedUploadMessage } from './reportForm';

export interface ReportFiles {
  /** The export under way, or null. */
  progress: FileProgress | null;
  /** Exports each part in turn, saving each file as it completes. */
  exportParts(query: ReportQuery, parts: readonly ExportPart[]): Promise<void>;
  /** Stops the export under way, if any. */
  stop(): void;
  /** Saves the uploaded file a history row links to. */
  openUpload(path: string): Promise<void>;
  /** The links found removed (410), with the reason to show instead of each. */
  removedUploads: Readonly<Record<string, string>>;
}

export function useReportFiles(): ReportFiles {
  const { config, sessions } = useServices();
  const [progress, setProgress] = useState<FileProgress | null>(null);
  const [removedUploads, setRemovedUploads] = useState<Readonly<Record<string, string>>>({});
  const running = useRef<AbortController | null>(null);

  useEffect(() => () => running.current?.abort(), []);

  const stop = useCallback(() => {
    running.current?.abort();
    running.current = null;
    setProgress(null);
  }, []);

  const exportParts = useCallback(
    async (query: ReportQuery, parts: readonly ExportPart[]) => {
      running.current?.abort();
      const controller = new AbortController();
      running.current = controller;
      try {
        for (const part of parts) {
          // Shown at once, while the server prepares the file; the server's name and sizes follow.
          const name = exportFileName(query.report, part, query.startdate, query.enddate, query.match);
          setProgress({ fileName: name, bytes: 0, totalRows: null });
          const file = await exportReport({ config, sessions }, query, part, {
            signal: controller.signal,
            onProgress: (next) => {
              if (running.current === controller) setProgress(next);
            },
          });
          if (controller.signal.aborted) return;
          downloadBlob(file.blob, file.fileName);
        }
      } catch (error) {
        if (!controller.signal.aborted) window.alert(failureMessage(error));
      } finally {
        if (running.current === controller) {
          running.current = null;
          setProgress(null);
        }
      }
    },
    [config, sessions],
  );

  const openUpload = useCallback(
    async (path: string) => {
      try {
        const file = await fetchUploadedFile({ config, sessions }, path);
        downloadBlob(file.blob, file.fileName);
      } catch (error) {
        const removed = removedUploadMessage(error);
        if (removed) setRemovedUploads((shown) => ({ ...shown, [path]: removed }));
        else window.alert(failureMessage(error));
      }
    },
    [config, sessions],
  );

  return { progress, exportParts, stop, openUpload, removedUploads };
}
