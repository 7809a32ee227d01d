/**
 * A table in a fixed-height scrolling area that renders only the rows in view (components/virtualRows),
 * so a batch's 100,000 results or a large File Preview scroll smoothly.
 */
import { Box, Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { SpacerRow, useVirtualRows } from '../../components/virtualRows';

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
  const { scrollRef, items, before, after, measure } = useVirtualRows({
    count: rows.length,
    estimate: ROW_HEIGHT,
    overscan: 20,
    flushSync: false,
    getItemKey: (index) => (rowKey ? rowKey(rows[index] as T, index) : index),
  });

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
          <SpacerRow height={before} span={columns.length} />
          {items.map((item) => {
            const row = rows[item.index] as T;
            return (
              <Table.Tr key={item.key} data-index={item.index} aria-rowindex={item.index + 2} ref={measure}>
                {columns.map((column) => (
                  <Table.Td key={column.header}>{column.cell(row)}</Table.Td>
                ))}
              </Table.Tr>
            );
          })}
          <SpacerRow height={after} span={columns.length} />
        </Table.Tbody>
      </Table>
    </Box>
  );
}
