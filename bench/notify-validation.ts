/**
 * Notify CSV validation, where operators wait: the rate at which Chromium validates a Notify batch CSV with
 * the contract's validator (the code the console runs on the chosen file, in its worker), in rows per second.
 * The file (BENCH_NOTIFY_ROWS rows, 500,000 by default: names, amounts, dates and all three templates, every
 * row valid) is made in the page first, as if chosen in the file picker; only the validation is timed, after
 * one warm-up run.
 *
 *   node --import tsx bench/notify-validation.ts
 */
import { launchBrowser } from '../e2e/support/chromium';
import { browserBundle } from './lib/chromium';
import { type Figure, fmt } from './lib/report';

const ROWS = Number(process.env.BENCH_NOTIFY_ROWS ?? 500_000);
/** The target: at least this many rows per second. */
const TARGET_ROWS_PER_S = 500_000;
/** The operator's day of the run: every Pre row is dated after it, every Post row before it. */
const TODAY = '2026-06-15';

interface Run {
  ms: number;
  valid: number;
  invalid: number;
  mb: number;
}

async function validateInBrowser(rows: number): Promise<Run> {
  // The Notify validator bundled for the browser, as the console ships it (Papa Parse included).
  const bundle = await browserBundle('packages/contract/src/csv/notifyCsv.ts', 'LendlockNotifyCsv');
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.setContent('<!doctype html><title>notify csv</title>');
    await page.addScriptTag({ content: bundle });
    const run = () =>
      page.evaluate(
        async ({ n, today }) => {
          const templates = [
            ['Pre', '20/07/2026'],
            ['Due', '15/06/2026'],
            ['Post', '10/05/2026'],
          ] as const;
          const lines = new Array<string>(n + 1);
          lines[0] = 'sno,name,imei1,amount,date,template';
          for (let i = 1; i <= n; i++) {
            const [template, date] = templates[i % 3] as readonly [string, string];
            const amount = `${1000 + (i % 90_000)}${i % 2 ? '.50' : ''}`;
            lines[i] = `${i},Customer ${i},35${String(i).padStart(13, '0')},${amount},${date},${template}`;
          }
          const file = new File([`${lines.join('\r\n')}\r\n`], 'reminders.csv', { type: 'text/csv' });
          const api = (window as unknown as { LendlockNotifyCsv: typeof import('@lendlock/contract') })
            .LendlockNotifyCsv;
          const started = performance.now();
          const result = await api.validateNotifyCsv(file, { today });
          const ms = performance.now() - started;
          return { ms, valid: result.valid.length, invalid: result.invalidCount, mb: file.size / 1e6 };
        },
        { n: rows, today: TODAY },
      );
    await run(); // warm the page's JIT once
    return await run();
  } finally {
    await browser.close();
  }
}

export async function notifyValidationBenchmark(log: (line: string) => void): Promise<Figure[]> {
  log('Notify CSV validation in Chromium (contract validator)');
  const run = await validateInBrowser(ROWS);
  if (run.valid !== ROWS)
    throw new Error(`the validator passed ${run.valid} rows of ${ROWS} (${run.invalid} invalid)`);
  const rate = ROWS / (run.ms / 1000);
  log(
    `  ${fmt.int(ROWS)}-row Notify CSV (${fmt.num(run.mb)} MB) validated in ${fmt.s(run.ms)}: ${fmt.int(rate)} rows/s (target ≥ ${fmt.int(TARGET_ROWS_PER_S)} rows/s)`,
  );
  return [
    {
      bench: '6 Console',
      what: `validate a ${fmt.int(ROWS)}-row Notify CSV in Chromium (contract validator, ${fmt.num(run.mb)} MB File)`,
      value: `${fmt.int(rate)} rows/s`,
      beside: fmt.s(run.ms),
      target: `≥ ${fmt.int(TARGET_ROWS_PER_S)} rows/s`,
      holds: rate >= TARGET_ROWS_PER_S,
    },
  ];
}

if (import.meta.url === `file://${process.argv[1]}`) {
  notifyValidationBenchmark(console.log).then(
    (figures) => {
      console.table(figures);
      process.exit(0);
    },
    (error: unknown) => {
      console.error(error);
      process.exit(1);
    },
  );
}
