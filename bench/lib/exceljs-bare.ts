/**
 * ExcelJS's streaming writer with nothing else: N rows shaped like the commands export (the same columns,
 * cell types and lengths), written with the options and pacing the export used with ExcelJS to a stream that
 * discards the bytes. Prints {"ms", "rss", "bytes", "liveHeap"} as JSON (liveHeap: the heap after a full
 * collection halfway, with --expose-gc). Run as its own process, for a clean RSS.
 *
 *   node --import tsx bench/lib/exceljs-bare.ts 1000000
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import ExcelJS from 'exceljs';

/** The options the export used with ExcelJS, before it wrote its own sheet XML (ADR 0006). */
const XLSX_WRITER_OPTIONS = { useStyles: false, useSharedStrings: false } as const;

/** Rows written between two looks at the compressor (see `keepPace`). */
const PACE_ROWS = 200;

type NeedsDrain = NodeJS.EventEmitter & {
  writableNeedDrain?: boolean;
  _writableState?: { needDrain?: boolean };
};

/**
 * Waits until the zip compressor has taken in what the sheet gave it. ExcelJS hands the sheet's XML to
 * its zip (archiver) without back-pressure, and the compression runs in the thread pool one chunk per
 * turn of the event loop: a writer that does not wait piles a million rows up in memory (half a
 * gigabyte) and compresses them at the end. While the compressor's input is over its high-water mark,
 * this waits for it to drain, and otherwise lets the event loop turn once.
 */
async function keepPace(sheet: ExcelJS.Worksheet): Promise<void> {
  const input = (sheet as unknown as { stream?: { pipes?: NeedsDrain[] } }).stream?.pipes?.[0];
  if (input && (input.writableNeedDrain ?? input._writableState?.needDrain)) {
    await new Promise((resolve) => input.once('drain', resolve));
  } else {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const rows = Number(process.argv[2] ?? 1_000_000);
let bytes = 0;
let peak = 0;
let liveHeap = 0;
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    bytes += chunk.length;
    done();
  },
});
const sampler = setInterval(() => {
  peak = Math.max(peak, process.memoryUsage.rss());
}, 20);

// The cells are made before the clock starts (a pool of distinct rows, reused): only ExcelJS is timed.
const base = Date.now() - 400 * 86_400_000;
const pool = Array.from({ length: 10_000 }, (_, i) => {
  const at = new Date(base + i * 30_000).toISOString();
  return [
    0,
    at,
    `35${String((i * 7919) % 1_000_000).padStart(13, '0')}`,
    createHash('md5').update(String(i)).digest('hex'),
    'S',
    'ACTIVATE ALARM',
    'EXECUTED',
    'ops@lendlock.com',
    '',
    at,
  ];
});
const started = performance.now();
const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ stream: sink, ...XLSX_WRITER_OPTIONS });
const sheet = workbook.addWorksheet('Activate Alarm');
sheet
  .addRow([
    'Id',
    'Date and Time',
    'IMEI 1',
    'Transaction Id',
    'Interface',
    'Command',
    'Status',
    'User',
    'Command Type',
    'Created At',
  ])
  .commit();
for (let i = 1; i <= rows; i++) {
  const row = pool[i % pool.length] as unknown[];
  row[0] = i * 5;
  sheet.addRow(row).commit();
  // Paced as the export paces it (else ExcelJS holds everything until the end).
  if (i % PACE_ROWS === 0) await keepPace(sheet);
  // Halfway, once: how much the writer really holds (the heap after a full collection).
  if (i === Math.floor(rows / 2) && typeof globalThis.gc === 'function') {
    globalThis.gc();
    liveHeap = process.memoryUsage().heapUsed;
  }
}
sheet.commit();
await workbook.commit();
const ms = performance.now() - started;
clearInterval(sampler);
peak = Math.max(peak, process.memoryUsage.rss());
process.stdout.write(JSON.stringify({ ms, rss: peak, bytes, liveHeap }));
