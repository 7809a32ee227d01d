/**
 * Download and the bulk-upload history links: files fetched with the session token and saved under the
 * server's name (components/useDownload). An export reports its progress while it streams; Cancel (or
 * leaving the screen) stops it. An uploaded file deleted after UPLOAD_RETENTION answers 410: its link
 * then shows the server's reason instead of a download that cannot happen.
 */

import { type ExportPart, exportFileName } from '@lendlock/contract';
import { useCallback, useState } from 'react';
import type { FileProgress } from '../../api/client';
import { exportReport, fetchUploadedFile, type ReportQuery } from '../../api/reports';
import { useServices } from '../../app/services';
import { useDownload } from '../../components/useDownload';
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
  const { api } = useServices();
  const download = useDownload();
  const { run } = download;
  // A history link is its own download: opening one does not stop an export under way.
  const upload = useDownload().run;
  const [removedUploads, setRemovedUploads] = useState<Readonly<Record<string, string>>>({});

  const exportParts = useCallback(
    async (query: ReportQuery, parts: readonly ExportPart[]) => {
      try {
        for (const part of parts) {
          const name = exportFileName(query.report, part, query.startdate, query.enddate, query.match);
          const saved = await run(name, (options) => exportReport(api, query, part, options));
          if (!saved) return;
        }
      } catch (error) {
        window.alert(failureMessage(error));
      }
    },
    [api, run],
  );

  const openUpload = useCallback(
    async (path: string) => {
      try {
        await upload(path, (options) => fetchUploadedFile(api, path, options));
      } catch (error) {
        const removed = removedUploadMessage(error);
        if (removed) setRemovedUploads((shown) => ({ ...shown, [path]: removed }));
        else window.alert(failureMessage(error));
      }
    },
    [api, upload],
  );

  return { progress: download.progress, exportParts, stop: download.stop, openUpload, removedUploads };
}
