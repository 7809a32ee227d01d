/**
 * A result table in a 380 px scrolling area that stays smooth at 100,000 rows (components/virtualRows).
 * The layout is fixed, so columns keep their widths while rows scroll by.
 */
import { Table } from '@mantine/core';
import type { ReactNode } from 'react';
import { SpacerRow, useVirtualRows } from '../../components/virtualRows';
import type { Column } from './columns';

/** The height a row is assumed to have before it is measured. */
export const ROW_ESTIMATE_PX = 37;

export function VirtualTable({
  testId,
  label,
  columns,
  rowCount,
  renderCells,
}: {
  testId: string;
  /** Accessible name of the scrolling area. */
  label: string;
  columns: readonly Column[];
  rowCount: number;
  /** The cells (`<Table.Td>`s) of row `index`. */
  renderCells: (index: number) => ReactNode;
}) {
  const { scrollRef, items, before, after, measure } = useVirtualRows<HTMLElement>({
    count: rowCount,
    estimate: ROW_ESTIMATE_PX,
    overscan: 10,
  });
  const width = columns.reduce((sum, column) => sum + column.width, 0);

  return (
    <section ref={scrollRef} className="report-scroll" data-testid={testId} aria-label={label}>
      <Table className="report-table" w="100%" miw={width} withTableBorder highlightOnHover stickyHeader>
        <colgroup>
          {columns.map((column) => (
            <col key={column.title} style={{ width: column.width }} />
          ))}
        </colgroup>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) => (
              <Table.Th key={column.title}>{column.title}</Table.Th>
            ))}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          <SpacerRow height={before} span={columns.length} className="report-spacer" />
          {items.map((item) => (
            <Table.Tr key={item.key} data-index={item.index} ref={measure} className="report-row">
              {renderCells(item.index)}
            </Table.Tr>
          ))}
          <SpacerRow height={after} span={columns.length} className="report-spacer" />
        </Table.Tbody>
      </Table>
    </section>
  );
}
