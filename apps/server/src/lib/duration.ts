const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** Parses `8h`, `30m`, `6s`, `1500ms`, `2d`, or a bare number of seconds. Returns milliseconds or null. */
export function parseDuration(value: string): number | null {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(value);
  if (!match) return null;
  const amount = Number(match[1]);
  const unit = UNITS[match[2] ?? 's'] ?? 1000;
  const ms = Math.round(amount * unit);
  return ms > 0 ? ms : null;
}

const NAMES: [number, string][] = [
  [86_400_000, 'day'],
  [3_600_000, 'hour'],
  [60_000, 'minute'],
  [1000, 'second'],
];

/** A duration as people say it: 90 days, 1 hour, 30 minutes, 1500 ms (the largest unit that divides it). */
export function formatDuration(ms: number): string {
  for (const [size, name] of NAMES) {
    if (ms >= size && ms % size === 0) {
      const n = ms / size;
      return `${n} ${name}${n === 1 ? '' : 's'}`;
    }
  }
  return `${ms} ms`;
}
