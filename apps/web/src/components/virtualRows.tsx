/**
 * What every virtual table of the console shares (the batch results and File Preview, the reports, the
 * audit log): only the rows in view, and a few either side, are in the page (@tanstack/react-virtual);
 * one spacer row above and one below stand for the rest, so the scroll height is the whole list's. Rows
 * are measured, so wrapped text keeps its height.
 */
import { useVirtualizer } from '@tanstack/react-virtual';
import { useRef } from 'react';

export interface VirtualRowsOptions {
  count: number;
  /** The height a row is assumed to have before it is measured, in px. */
  estimate: number;
  overscan: number;
  /** A stable key per row (default: its index). */
  getItemKey?: (index: number) => string | number;
  /** Render scroll updates without React's flushSync (smoother while many rows change). */
  flushSync?: boolean;
}

export function useVirtualRows<E extends HTMLElement = HTMLDivElement>(options: VirtualRowsOptions) {
  const scrollRef = useRef<E>(null);
  const virtualizer = useVirtualizer({
    count: options.count,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => options.estimate,
    overscan: options.overscan,
    ...(options.flushSync === false ? { useFlushSync: false } : {}),
    ...(options.getItemKey ? { getItemKey: options.getItemKey } : {}),
  });
  const items = virtualizer.getVirtualItems();
  const before = items[0]?.start ?? 0;
  const after = Math.max(0, virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0));
  return { scrollRef, items, before, after, measure: virtualizer.measureElement };
}

/** Stands for the rows out of view above or below. */
export function SpacerRow({ height, span, className }: { height: number; span: number; className?: string }) {
  if (height <= 0) return null;
  return (
    <tr aria-hidden className={className}>
      <td colSpan={span} style={{ height, padding: 0, border: 0 }} />
    </tr>
  );
}
