import { withBom } from '@lendlock/contract';

/** Saves a file built in the browser (a CSV or xlsx export) under `fileName`. */
export function downloadBlob(blob: Blob, fileName: string): void {
  const url = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.rel = 'noopener';
  link.style.display = 'none';
  document.body.append(link);
  link.click();
  link.remove();
  // Give the browser the time to start the download before the URL goes.
  setTimeout(() => URL.revokeObjectURL(url), 30_000);
}

/**
 * Saves text under `fileName`. A CSV starts with the UTF-8 byte order mark (once), so Excel reads it as
 * UTF-8 and shows '₹' and names in any script as they are.
 */
export function downloadText(text: string, fileName: string, type = 'text/csv;charset=utf-8'): void {
  const csv = type.startsWith('text/csv');
  downloadBlob(new Blob([csv ? withBom(text) : text], { type }), fileName);
}
