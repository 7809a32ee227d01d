/**
 * The console's one virtual table (the batch results and File Preview, the reports, the audit log):
 * only the rows in view, and a few either side, are in the page (@tanstack/react-virtual); one spacer
 * row above and one below stand for the rest, so the scroll height is the whole list's and 100,000 rows
 * scroll smoothly. Rows are measured, so wrapped text keeps its height. When every column has a width
 * the layout is fixed: columns keep their widths while rows scroll by and long text ends in '…' (its
 * whole text is the cell's tooltip).
 */
import { Table } from '@mantine/core';
import { useVirtualizer } from '@tanstack/react-virtual';
import { useEffect, useRef } from 'react';
import type { VirtualColumn } from './columns';
import './virtualTable.css';

/** The height a row is assumed to have before it is measured, in px. */
const ROW_ESTIMATE_PX = 36;
const OVERSCAN = 15;

export function VirtualTable<T>({
  rows,
  columns,
  height,
  rowKey,
  testId,
  label,
  onEndReached,
}: {
  rows: readonly T[];
  columns: readonly VirtualColumn<T>[];
  /** Height of the scrolling area in px (result tables about 350 to 400 px; the File Preview at most 300). */
  height: number;
  /** A stable key per row (default: its index). */
  rowKey?: (row: T, index: number) => string | number;
  testId?: string;
  /** Accessible name of the scrolling area. */
  label?: string;
  /** Called when the rows in the page reach the last row (a paged table loads its next page). */
  onEndReached?: (() => void) | undefined;
}) {
  const scrollRef = useRef<HTMLElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_ESTIMATE_PX,
    overscan: OVERSCAN,
    // Scroll updates render without React's flushSync: smoother while many rows change.
    useFlushSync: false,
    getItemKey: (index) => (rowKey ? rowKey(rows[index] as T, index) : index),
  });
  const items = virtualizer.getVirtualItems();
  const lastInPage = items.at(-1)?.index ?? -1;
  useEffect(() => {
    if (onEndReached && rows.length > 0 && lastInPage >= rows.length - 1) onEndReached();
  }, [onEndReached, lastInPage, rows.length]);
  const before = items[0]?.start ?? 0;
  const after = Math.max(0, virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0));
  const fixed = columns.every((column) => column.width !== undefined);
  const width = fixed ? columns.reduce((sum, column) => sum + (column.width ?? 0), 0) : undefined;

  return (
    <section
      ref={scrollRef}
      className="virtual-scroll"
      style={{ maxHeight: height }}
      data-testid={testId}
      aria-label={label}
      // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable to be scrolled by keyboard (WCAG 2.1.1; axe scrollable-region-focusable)
      tabIndex={0}
    >
      <Table
        className="virtual-table"
        data-fixed={fixed || undefined}
        w="100%"
        miw={width}
        withTableBorder
        highlightOnHover
        stickyHeader
        verticalSpacing={6}
        aria-rowcount={rows.length + 1}
      >
        {fixed ? (
          <colgroup>
            {columns.map((column) => (
              <col key={column.header} style={{ width: column.width }} />
            ))}
          </colgroup>
        ) : null}
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column.header}>{column.header}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          <SpacerRow height={before} span={columns.length} />
          {items.map((item) => {
            const row = rows[item.index] as T;
            return (
              <Table.Tr
                key={item.key}
                className="virtual-row"
                data-index={item.index}
                aria-rowindex={item.index + 2}
                ref={virtualizer.measureElement}
              >
                {columns.map((column) => (
                  <Table.Td key={column.header} title={column.title?.(row, item.index)}>
                    {column.cell(row, item.index)}
                  </Table.Td>
                ))}
              </Table.Tr>
            );
          })}
          <SpacerRow height={after} span={columns.length} />
        </Table.Tbody>
      </Table>
    </section>
  );
}

/** Stands for the rows out of view above or below. */
function SpacerRow({ height, span }: { height: number; span: number }) {
  if (height <= 0) return null;
  return (
    <tr aria-hidden>
      <td colSpan={span} style={{ height, padding: 0, border: 0 }} />
    </tr>
  );
}
