/** The figures of a run: one row per measurement, printed as a table and written to docs/performance.md. */
import { execFileSync } from 'node:child_process';
import { cpus, totalmem } from 'node:os';

export interface Figure {
  /** Benchmark number and name, e.g. "1 Batch throughput". */
  bench: string;
  /** What was measured, e.g. "100,000 IMEIs, PostgreSQL + Mosquitto". */
  what: string;
  /** The figure, formatted (e.g. "12,345 IMEIs/s"). */
  value: string;
  /** The figure beside it, or the ratio (e.g. "41.2× the per-IMEI loop"). */
  beside?: string;
  /** The target, e.g. "≥ 10,000 IMEIs/s". */
  target?: string;
  /** Whether the target holds (undefined: no target on this row). */
  holds?: boolean;
  /** For a missed target: by how much and why (also used for remarks). */
  note?: string;
  /** Cores of other work on the machine during the measurement (the worst moment), when measured. */
  disturbance?: number;
}

export const fmt = {
  int: (n: number) => Math.round(n).toLocaleString('en-US'),
  num: (n: number, digits = 1) =>
    n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }),
  ms: (n: number) => `${n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : Math.round(n)} ms`,
  s: (ms: number) => `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`,
  mb: (bytes: number) => `${Math.round(bytes / 1024 / 1024)} MB`,
  kb: (bytes: number) => `${(bytes / 1000).toFixed(1)} kB`,
};

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  postgres: string;
  mosquitto: string;
  chromium: string;
}

function firstLine(command: string, args: string[]): string {
  let out: string;
  try {
    out = execFileSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (error) {
    // Some tools print their version and exit non-zero (mosquitto -h).
    out = String((error as { stdout?: string }).stdout ?? '');
  }
  return out.split('\n')[0]?.trim() || 'not found';
}

export function machine(): Machine {
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    ramGiB: Math.round(totalmem() / 1024 ** 3),
    node: process.version,
    postgres: firstLine('psql', ['--version']).replace(/^psql \(PostgreSQL\) /, ''),
    mosquitto: firstLine('mosquitto', ['-h']).replace(/^mosquitto version /, ''),
    chromium: firstLine(process.env.CHROMIUM_PATH ?? '/usr/bin/chromium', ['--version']),
  };
}

const mark = (figure: Figure) => (figure.holds === undefined ? '' : figure.holds ? 'yes' : 'NO');

/** A plain-text table for the terminal. */
export function textTable(figures: readonly Figure[]): string {
  const header = ['Benchmark', 'Measured', 'Figure', 'Beside it / ratio', 'Target', 'Holds'];
  const rows = figures.map((f) => [f.bench, f.what, f.value, f.beside ?? '', f.target ?? '', mark(f)]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(widths[i] ?? 0)).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

const cell = (text: string) => text.replace(/\|/g, '\\|');

/** The same table in Markdown. */
export function markdownTable(figures: readonly Figure[]): string {
  const header = '| Benchmark | Measured | Figure | Beside it / ratio | Target | Holds |';
  const rule = '| --- | --- | --- | --- | --- | --- |';
  const rows = figures.map(
    (f) =>
      `| ${cell(f.bench)} | ${cell(f.what)} | ${cell(f.value)} | ${cell(f.beside ?? '')} | ${cell(f.target ?? '')} | ${mark(f)} |`,
  );
  return [header, rule, ...rows].join('\n');
}
