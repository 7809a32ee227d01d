/**
 * A result table in a 380 px scrolling area that stays smooth at 100,000 rows: only the rows in view (and
 * a few either side) are in the page (@tanstack/react-virtual); spacer rows keep the scroll height of the
 * whole list. The layout is fixed, so columns keep their widths while rows scroll by.
 */
import { Table } from '@mantine/core';
import { useVirtualizer } from '@tanstack/react-virtual';
import { type ReactNode, useRef } from 'react';
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
  const scrollRef = useRef<HTMLDivElement>(null);
  const virtualizer = useVirtualizer({
    count: rowCount,
    getScrollElement: () => scrollRef.current,
    estimateSize: () => ROW_ESTIMATE_PX,
    overscan: 10,
  });
  const items = virtualizer.getVirtualItems();
  const before = items[0]?.start ?? 0;
  const after = Math.max(0, virtualizer.getTotalSize() - (items.at(-1)?.end ?? 0));
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
          {before > 0 ? <Spacer height={before} span={columns.length} /> : null}
          {items.map((item) => (
            <Table.Tr
              key={item.key}
              data-index={item.index}
              ref={virtualizer.measureElement}
              className="report-row"
            >
              {renderCells(item.index)}
            </Table.Tr>
          ))}
          {after > 0 ? <Spacer height={after} span={columns.length} /> : null}
        </Table.Tbody>
      </Table>
    </section>
  );
}

/** Stands for the rows out of view above or below. */
function Spacer({ height, span }: { height: number; span: number }) {
  return (
    <tr className="report-spacer">
      <td colSpan={span} style={{ height }} />
    </tr>
  );
}
