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
