/**
 * The result tables of a loaded report (spec §2): registrations with View Audit per row, de-enroll
 * records, or a command's bulk-upload history (links to the uploaded files) and its executed commands.
 */
import type { BulkHistoryRow, DeenrollRow, ExecutedCommandRow, RegistrationRow } from '@lendlock/contract';
import { Anchor, Button, Card, Group, Stack, Table, Text, Title } from '@mantine/core';
import type { ReactNode } from 'react';
import type { Report } from '../../api/reports';
import { useOpenAudit } from '../Audit/openAudit';
import {
  ACTION_COLUMN,
  BULK_HISTORY_COLUMNS,
  BULK_HISTORY_FILE_COLUMN,
  bulkHistoryCells,
  COMMAND_COLUMNS,
  COMMAND_INTERFACE_COLUMN,
  type Column,
  commandCells,
  DEENROLL_COLUMNS,
  deenrollCells,
  REGISTRATION_COLUMNS,
  registrationCells,
  SNO_COLUMN,
} from './columns';
import { INTERFACE_NAMES, REPORT_LABELS as L } from './labels';
import { VirtualTable } from './VirtualTable';
import './reports.css';

export function ReportResults({
  report,
  title,
  onOpenUpload,
  removedUploads = {},
}: {
  report: Report;
  /** The tab's label (the heading of its main table). */
  title: string;
  onOpenUpload: (path: string) => void;
  /** History links whose file was removed (410), with the reason shown instead of the link. */
  removedUploads?: Readonly<Record<string, string>>;
}) {
  switch (report.kind) {
    case 'registration':
      return <RegistrationTable rows={report.items} title={title} />;
    case 'deenroll':
      return <DeenrollTable rows={report.items} title={title} />;
    case 'command':
      return (
        <Stack>
          <BulkHistoryTable rows={report.items} onOpenUpload={onOpenUpload} removedUploads={removedUploads} />
          <CommandTable rows={report.commands} />
        </Stack>
      );
  }
}

function ResultCard({
  part,
  title,
  count,
  columns,
  renderCells,
}: {
  part: 'items' | 'commands';
  title: string;
  count: number;
  columns: readonly Column[];
  renderCells: (index: number) => ReactNode;
}) {
  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs">
        <Title order={4}>{title}</Title>
        <Text size="sm" c="dimmed" data-testid={`report-${part}-count`} data-count={count}>
          {L.rows(count)}
        </Text>
      </Group>
      {count === 0 ? (
        <Text size="sm" c="dimmed">
          {L.noRows}
        </Text>
      ) : (
        <VirtualTable
          testId={`report-${part}`}
          label={title}
          columns={columns}
          rowCount={count}
          renderCells={renderCells}
        />
      )}
    </Card>
  );
}

/** A row's text cells under `columns`; `special` gives a cell other content or another tooltip. */
function Cells({
  columns,
  cells,
  special,
}: {
  columns: readonly Column[];
  cells: readonly string[];
  special?: (cell: string, column: number) => { content?: ReactNode; title?: string } | null;
}) {
  return cells.map((cell, column) => {
    const custom = special?.(cell, column);
    return (
      <Table.Td key={columns[column]?.title ?? cell} title={custom?.title ?? cell}>
        {custom?.content ?? cell}
      </Table.Td>
    );
  });
}

function RegistrationTable({ rows, title }: { rows: readonly RegistrationRow[]; title: string }) {
  const openAudit = useOpenAudit();
  return (
    <ResultCard
      part="items"
      title={title}
      count={rows.length}
      columns={[SNO_COLUMN, ACTION_COLUMN, ...REGISTRATION_COLUMNS]}
      renderCells={(index) => {
        const row = rows[index] as RegistrationRow;
        return (
          <>
            <Table.Td>{index + 1}</Table.Td>
            <Table.Td>
              <Button size="compact-xs" variant="light" onClick={() => openAudit(row.imei1)}>
                {L.viewAudit}
              </Button>
            </Table.Td>
            <Cells columns={REGISTRATION_COLUMNS} cells={registrationCells(row)} />
          </>
        );
      }}
    />
  );
}

function DeenrollTable({ rows, title }: { rows: readonly DeenrollRow[]; title: string }) {
  return (
    <ResultCard
      part="items"
      title={title}
      count={rows.length}
      columns={[SNO_COLUMN, ...DEENROLL_COLUMNS]}
      renderCells={(index) => (
        <>
          <Table.Td>{index + 1}</Table.Td>
          <Cells columns={DEENROLL_COLUMNS} cells={deenrollCells(rows[index] as DeenrollRow)} />
        </>
      )}
    />
  );
}

function BulkHistoryTable({
  rows,
  onOpenUpload,
  removedUploads,
}: {
  rows: readonly BulkHistoryRow[];
  onOpenUpload: (path: string) => void;
  removedUploads: Readonly<Record<string, string>>;
}) {
  return (
    <ResultCard
      part="items"
      title={L.bulkHistory}
      count={rows.length}
      columns={[SNO_COLUMN, ...BULK_HISTORY_COLUMNS]}
      renderCells={(index) => {
        const row = rows[index] as BulkHistoryRow;
        return (
          <>
            <Table.Td>{index + 1}</Table.Td>
            <Cells
              columns={BULK_HISTORY_COLUMNS}
              cells={bulkHistoryCells(row)}
              special={(cell, column) => {
                const file = row.file;
                if (column !== BULK_HISTORY_FILE_COLUMN || !file) return null;
                const removed = removedUploads[file];
                if (removed)
                  return {
                    title: removed,
                    content: (
                      <Text size="sm" c="dimmed" data-testid="upload-removed">
                        {removed}
                      </Text>
                    ),
                  };
                return {
                  content: (
                    <Anchor
                      href={file}
                      size="sm"
                      onClick={(event) => {
                        // The file needs the session token, which a plain link cannot send.
                        event.preventDefault();
                        onOpenUpload(file);
                      }}
                    >
                      {cell}
                    </Anchor>
                  ),
                };
              }}
            />
          </>
        );
      }}
    />
  );
}

function CommandTable({ rows }: { rows: readonly ExecutedCommandRow[] }) {
  return (
    <ResultCard
      part="commands"
      title={L.commands}
      count={rows.length}
      columns={[SNO_COLUMN, ...COMMAND_COLUMNS]}
      renderCells={(index) => {
        const cells = commandCells(rows[index] as ExecutedCommandRow);
        return (
          <>
            <Table.Td>{index + 1}</Table.Td>
            <Cells
              columns={COMMAND_COLUMNS}
              cells={cells}
              special={(cell, column) =>
                column === COMMAND_INTERFACE_COLUMN ? { title: INTERFACE_NAMES[cell] ?? cell } : null
              }
            />
          </>
        );
      }}
    />
  );
}
