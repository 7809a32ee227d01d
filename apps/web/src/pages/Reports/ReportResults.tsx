/**
 * The result tables of a loaded report: registrations with View Audit per row, de-enroll
 * records, or a command's bulk-upload history (links to the uploaded files) and its executed commands.
 */
import type { BulkHistoryRow, DeenrollRow, ExecutedCommandRow, RegistrationRow } from '@lendlock/contract';
import { Anchor, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import type { Report } from '../../api/reports';
import { textColumns, type VirtualColumn } from '../../components/columns';
import { VirtualTable } from '../../components/VirtualTable';
import { useOpenAudit } from '../../features/audit/openAudit';
import {
  ACTION_COLUMN,
  BULK_HISTORY_COLUMNS,
  BULK_HISTORY_FILE_COLUMN,
  bulkHistoryCells,
  COMMAND_COLUMNS,
  COMMAND_INTERFACE_COLUMN,
  commandCells,
  DEENROLL_COLUMNS,
  deenrollCells,
  REGISTRATION_COLUMNS,
  registrationCells,
  SNO_COLUMN,
  uploadedFileName,
} from './columns';
import { INTERFACE_NAMES, REPORT_LABELS as L } from './labels';

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

function ResultCard<T>({
  part,
  title,
  rows,
  columns,
}: {
  part: 'items' | 'commands';
  title: string;
  rows: readonly T[];
  columns: readonly VirtualColumn<T>[];
}) {
  return (
    <Card withBorder>
      <Group justify="space-between" mb="xs">
        <Title order={4}>{title}</Title>
        <Text size="sm" c="dimmed" data-testid={`report-${part}-count`} data-count={rows.length}>
          {L.rows(rows.length)}
        </Text>
      </Group>
      {rows.length === 0 ? (
        <Text size="sm" c="dimmed">
          {L.noRows}
        </Text>
      ) : (
        <VirtualTable
          testId={`report-${part}`}
          label={title}
          rows={rows}
          columns={columns}
          height={REPORT_TABLE_HEIGHT}
        />
      )}
    </Card>
  );
}

/** Result tables scroll at about 350 to 400 px. */
const REPORT_TABLE_HEIGHT = 380;

/** The S.No. column: the row's position, from 1. */
function snoColumn<T>(): VirtualColumn<T> {
  return { header: SNO_COLUMN.title, width: SNO_COLUMN.width, cell: (_row, index) => index + 1 };
}

function RegistrationTable({ rows, title }: { rows: readonly RegistrationRow[]; title: string }) {
  const openAudit = useOpenAudit();
  const columns: VirtualColumn<RegistrationRow>[] = [
    snoColumn(),
    {
      header: ACTION_COLUMN.title,
      width: ACTION_COLUMN.width,
      cell: (row) => (
        <Button size="compact-xs" variant="light" onClick={() => openAudit(row.imei1)}>
          {L.viewAudit}
        </Button>
      ),
    },
    ...textColumns(REGISTRATION_COLUMNS, registrationCells),
  ];
  return <ResultCard part="items" title={title} rows={rows} columns={columns} />;
}

function DeenrollTable({ rows, title }: { rows: readonly DeenrollRow[]; title: string }) {
  const columns = [snoColumn<DeenrollRow>(), ...textColumns(DEENROLL_COLUMNS, deenrollCells)];
  return <ResultCard part="items" title={title} rows={rows} columns={columns} />;
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
  const columns = [snoColumn<BulkHistoryRow>(), ...textColumns(BULK_HISTORY_COLUMNS, bulkHistoryCells)];
  const text = columns[BULK_HISTORY_FILE_COLUMN + 1] as VirtualColumn<BulkHistoryRow>;
  // The File column links to the uploaded file, or says why it was removed.
  columns[BULK_HISTORY_FILE_COLUMN + 1] = {
    ...text,
    title: (row, index) => (row.file && removedUploads[row.file]) || text.title?.(row, index),
    cell: (row, index) => {
      const file = row.file;
      if (!file) return text.cell(row, index);
      const removed = removedUploads[file];
      if (removed)
        return (
          <Text size="sm" c="dimmed" data-testid="upload-removed">
            {removed}
          </Text>
        );
      return (
        <Anchor
          href={file}
          size="sm"
          onClick={(event) => {
            // The file needs the session token, which a plain link cannot send.
            event.preventDefault();
            onOpenUpload(file);
          }}
        >
          {uploadedFileName(row)}
        </Anchor>
      );
    },
  };
  return <ResultCard part="items" title={L.bulkHistory} rows={rows} columns={columns} />;
}

function CommandTable({ rows }: { rows: readonly ExecutedCommandRow[] }) {
  const columns = [snoColumn<ExecutedCommandRow>(), ...textColumns(COMMAND_COLUMNS, commandCells)];
  const text = columns[COMMAND_INTERFACE_COLUMN + 1] as VirtualColumn<ExecutedCommandRow>;
  // The Interface column's S, A or B has its meaning as the tooltip.
  columns[COMMAND_INTERFACE_COLUMN + 1] = {
    ...text,
    title: (row) => INTERFACE_NAMES[row.interface] ?? row.interface,
  };
  return <ResultCard part="commands" title={L.commands} rows={rows} columns={columns} />;
}
