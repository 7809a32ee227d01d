/**
 * The console's time zone on every dated call: the api modules add `timeZone` — the browser's
 * IANA zone, e.g. `Asia/Kolkata` — to the body or query of each call that takes days or returns
 * date-times (reports and their exports, the audit log and its export, the Audit Report download, the
 * dashboard, loans, and every batch upload, whose dated rows the server judges by the operator's day). The server takes that zone's whole days and writes its wall clock in the exported date
 * cells, so a file and a report read as the screen, which shows times in the browser's zone.
 */

/** The browser's IANA time zone, or undefined when it cannot tell (the server then uses REPORT_TIMEZONE). */
export function browserTimeZone(): string | undefined {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || undefined;
  } catch {
    return undefined;
  }
}

/** `fields` with the browser's `timeZone` added (left out when the browser cannot tell). */
export function withTimeZone<T extends object>(fields: T): T & { timeZone?: string } {
  const timeZone = browserTimeZone();
  return timeZone ? { ...fields, timeZone } : fields;
}
