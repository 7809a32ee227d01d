/** Rows per page of the device table. */
export const DEVICE_PAGE_SIZE = 50;

/** The rows of page `page` (1-based, kept within range), where they start, and how many pages there are. */
export function pageOf<T>(items: readonly T[], page: number, size = DEVICE_PAGE_SIZE) {
  const pages = Math.max(1, Math.ceil(items.length / size));
  const current = Math.min(Math.max(1, page), pages);
  const start = (current - 1) * size;
  return { rows: items.slice(start, start + size), start, page: current, pages };
}
