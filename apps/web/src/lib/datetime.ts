const pad = (n: number): string => String(n).padStart(2, '0');

/**
 * `YYYY-MM-DD HH:mm:ss` in the browser's local time: the session expiry in the red notice and the
 * live clock. Accepts a Date, an ISO string or epoch milliseconds; an unparseable value gives ''.
 */
export function formatLocalDateTime(value: Date | string | number): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) return '';
  return (
    `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
    `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`
  );
}
