/**
 * The columns of the console's virtual table (components/VirtualTable): a heading, an optional width,
 * the cell and its tooltip. Text tables (reports, audit log) define headings and widths beside a pure
 * function giving a row's cells as text (unit-tested), and `textColumns` joins the two.
 */
import type { ReactNode } from 'react';

export interface VirtualColumn<T> {
  header: string;
  /** Width in px; when every column has one, the table's layout is fixed. */
  width?: number;
  cell: (row: T, index: number) => ReactNode;
  /** The cell's tooltip (its title attribute), e.g. its whole text. */
  title?: (row: T, index: number) => string | undefined;
}

/** A heading and width, for the tables whose cells are the text `cells(row)` gives. */
export interface TextColumn {
  title: string;
  width: number;
}

/** Text columns: cell `i` of `cells(row)` under `columns[i]`, its whole text as the tooltip. */
export function textColumns<T>(
  columns: readonly TextColumn[],
  cells: (row: T) => readonly string[],
): VirtualColumn<T>[] {
  return columns.map((column, i) => ({
    header: column.title,
    width: column.width,
    cell: (row) => cells(row)[i] ?? '',
    title: (row) => cells(row)[i] ?? '',
  }));
}
