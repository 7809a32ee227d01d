/**
 * Streams a CSV source through Papa Parse in chunks, handing each chunk's rows to `onRows`. The source
 * is a File or Blob (browser), a Node readable stream, or the text itself; a million-row file never sits
 * in memory as parsed rows.
 */
import type { LocalFile, ParseResult } from 'papaparse';

/** A Node readable stream (structurally, so the browser build needs no Node types). */
export interface CsvReadable {
  readonly readable: boolean;
  read(...args: never[]): unknown;
  on(event: string, listener: (...args: never[]) => void): unknown;
}

export type CsvInput = string | Blob | CsvReadable;

const STRING_CHUNK = 1 << 20;

/** Papa Parse is loaded on first use, so it is not part of a bundle that only imports the contract. */
export async function loadPapa() {
  return (await import('papaparse')).default;
}

export async function parseCsvRows(
  source: CsvInput,
  onRows: (rows: readonly (readonly string[])[]) => void,
  chunkSize?: number,
): Promise<void> {
  const Papa = await loadPapa();
  // Papa Parse reads a Blob with FileReader, which Node does not have: read it as text there.
  const input =
    typeof Blob !== 'undefined' && source instanceof Blob && !('FileReader' in globalThis)
      ? await source.text()
      : source;
  await new Promise<void>((resolve, reject) => {
    const config = {
      delimiter: ',',
      skipEmptyLines: false,
      chunkSize: chunkSize ?? (typeof input === 'string' ? STRING_CHUNK : undefined),
      chunk: (results: ParseResult<string[]>) => onRows(results.data),
      complete: () => resolve(),
      error: (error: Error) => reject(error),
    };
    if (typeof input === 'string') Papa.parse<string[]>(input, config);
    else Papa.parse<string[], LocalFile>(input as LocalFile, config);
  });
}
