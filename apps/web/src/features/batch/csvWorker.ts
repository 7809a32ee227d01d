/**
 * The batch CSV validator off the main thread: the contract's streaming validators (the same code the
 * server runs) read the file here, so a million-row file is checked while the page stays responsive.
 * For an IMEI file only the counts and the invalid rows come back (the server reads the IMEIs from the
 * uploaded file itself); for a Notify file also its rows, which the File Preview shows.
 */
// First: the contract builds zod schemas, which must not probe for `new Function` under the CSP.
import '../../lib/zodJitless';
import { validateImeiCsv, validateNotifyCsv } from '@lendlock/contract';
import type { CsvWorkerReply, CsvWorkerRequest } from './validateInWorker';

const scope = globalThis as unknown as {
  onmessage: ((event: MessageEvent<CsvWorkerRequest>) => void) | null;
  postMessage(reply: CsvWorkerReply): void;
};

scope.onmessage = async ({ data: { file, kind } }) => {
  try {
    if (kind === 'notify') {
      const result = await validateNotifyCsv(file);
      scope.postMessage({
        ok: true,
        check: {
          total: result.total,
          validCount: result.valid.length,
          invalid: result.invalid,
          invalidCount: result.invalidCount,
          note: result.note,
          duplicates: result.duplicates,
          rows: result.valid,
        },
      });
    } else {
      const result = await validateImeiCsv(file);
      scope.postMessage({
        ok: true,
        check: {
          total: result.total,
          validCount: result.valid.length,
          invalid: result.invalid,
          invalidCount: result.invalidCount,
          note: result.note,
          duplicates: result.duplicates,
          rows: [],
        },
      });
    }
  } catch (error) {
    scope.postMessage({ ok: false, error: error instanceof Error ? error.message : String(error) });
  }
};
