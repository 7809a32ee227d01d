/**
 * A list the console fetched (a TanStack query), as a table: the loader while it loads, its failure
 * (role alert), the text for an empty list, or a striped table with a header cell per column and a row
 * per item. The Collections tabs and the Webhooks deliveries show their lists through it.
 */
import { Table, Text } from '@mantine/core';
import type { UseQueryResult } from '@tanstack/react-query';
import type { ReactNode } from 'react';
import { PageLoader } from '../app/PageLoader';

/** A header cell: its text, right-aligned (numbers) when so marked. */
export type QueryTableColumn = string | { label: string; right: true };

export function QueryTable<T>({
  query,
  failureText,
  empty,
  label,
  testId,
  minWidth = 720,
  columns,
  row,
}: {
  query: UseQueryResult<readonly T[]>;
  /** The text of a failed fetch. */
  failureText: (error: unknown) => string;
  /** What an empty list says. */
  empty: string;
  /** The table's accessible name. */
  label: string;
  testId?: string;
  /** Below this width the table scrolls sideways. */
  minWidth?: number;
  columns: readonly QueryTableColumn[];
  /** An item's row (a `Table.Tr` with its key). */
  row: (item: T) => ReactNode;
}) {
  if (query.isPending) return <PageLoader />;
  if (query.isError)
    return (
      <Text c="red.8" role="alert">
        {failureText(query.error)}
      </Text>
    );
  if (query.data.length === 0) return <Text size="sm">{empty}</Text>;
  return (
    <Table.ScrollContainer minWidth={minWidth}>
      <Table striped verticalSpacing="xs" aria-label={label} data-testid={testId}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <Table.Th key={column}>{column}</Table.Th>
              ) : (
                <Table.Th key={column.label} ta="right">
                  {column.label}
                </Table.Th>
              ),
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>{query.data.map(row)}</Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}
