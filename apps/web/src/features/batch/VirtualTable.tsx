/**
 * A table in a fixed-height scrolling area that renders only the rows in view (TanStack Virtual), so a
 * batch's 100,000 results or a large File Preview scroll smoothly. Rows above and below the window are
 * stood in for by one spacer row each; rows are measured, so wrapped text keeps its height.
 */
import { Box, Table } from '@mantine/core';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type ReactNode, useRef } from 'react';

export interface VirtualColumn<T> {
  header: string;
  cell: (row: T) => ReactNode;
}

const ROW_HEIGHT = 35;

export function VirtualTable<T>({
  rows,
  columns,
  height,
  rowKey,
  testId,
}: {
  rows: readonly T[];
  columns: readonly VirtualColumn<T>[];
  /** Height of the scrolling area in px (spec §9: about 350 px; the File Preview body at most 300 px). */
  height: number;
  /** A stable key per row (default: its index). */
  rowKey?: (row: T, index: number) => string | number;
  testId?: string;
}) {
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rows.length,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_HEIGHT,
    overscan: 20,
    useFlushSync: false,
    getItemKey: (index) => (rowKey ? rowKey(rows[index] as T, index) : index),
  });
  const items = virtualizer.getVirtualItems();
  const first = items[0];
  const last = items.at(-1);
  const before = first?.start ?? 0;
  const after = last ? virtualizer.getTotalSize() - last.end : 0;
  const spacer = (px: number, key: string) =>
    px > 0 ? (
      <tr key={key} aria-hidden>
        <td colSpan={columns.length} style={{ height: px, padding: 0, border: 0 }} />
      </tr>
    ) : null;

  return (
    <Box ref={scrollRef} mah={height} style={{ overflowY: 'auto' }} data-testid={testId}>
      <Table stickyHeader withTableBorder verticalSpacing={6} aria-rowcount={rows.length + 1}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column.header}>{column.header}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {spacer(before, 'before')}
          {items.map((item) => {
            const row = rows[item.index] as T;
            return (
              <Table.Tr
                key={item.key}
                data-index={item.index}
                aria-rowindex={item.index + 2}
                ref={virtualizer.measureElement}
              >
                {columns.map((column) => (
                  <Table.Td key={column.header}>{column.cell(row)}</Table.Td>
                ))}
              </Table.Tr>
            );
          })}
          {spacer(after, 'after')}
        </Table.Tbody>
      </Table>
    </Box>
  );
}
