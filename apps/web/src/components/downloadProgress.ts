/** How a download under way reads: 'Exporting report-….xlsx: 1.5 MB received, 1,200 rows'. */
import type { FileProgress } from '../api/client';

const DOWNLOAD_LABELS = {
  exporting: (fileName: string) => `Exporting ${fileName}`,
  received: (bytes: string) => `${bytes} received`,
  ofRows: (rows: number) => `${rows.toLocaleString('en-US')} ${rows === 1 ? 'row' : 'rows'}`,
} as const;

/** 1536 → '1.5 KB'. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KB', 'MB', 'GB'];
  let value = bytes / 1024;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

export function downloadProgressText(progress: FileProgress): string {
  const L = DOWNLOAD_LABELS;
  const parts = [L.received(formatBytes(progress.bytes))];
  if (progress.totalRows !== null) parts.push(L.ofRows(progress.totalRows));
  return `${L.exporting(progress.fileName)}: ${parts.join(', ')}`;
}
