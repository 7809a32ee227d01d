/**
 * Audit Report By IMEI: the IMEI input (prefilled from View Audit) acts at exactly 15 characters
 * and clears the report otherwise; the search button alerts 'IMEI number must be exactly 15 digits.' on
 * anything else. Four sections (registration, released, de-enroll/re-registration, executed commands with
 * each command's live status, refreshed while any awaits its device), Print Report with a print layout,
 * and Download Report: the xlsx the server writes (`GET /api/v2/auditReport/export`, one sheet per
 * section, in the browser's time zone), saved as `AuditReport_{brand}_imei-{imei}.xlsx`.
 */
import {
  type AuditResponse,
  type AuditTable,
  auditBrand,
  auditFileName,
  isAuditEmpty,
  MESSAGES,
  type Screen,
} from '@lendlock/contract';
import {
  Badge,
  Button,
  Card,
  Center,
  Group,
  Loader,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { refusalMessage } from '../../../api/client';
import { deviceKeys, exportAuditReport, fetchAuditReport } from '../../../api/devices';
import { useServices } from '../../../app/services';
import { isPendingStatus, statusColor } from '../../../components/commandStatus';
import { useDownload } from '../../../components/useDownload';
import { readAuditImei } from '../../../features/audit/openAudit';
import { searchableImei } from '../../../features/devices/imeiSearch';
import { AUDIT_LABELS as L } from '../labels';
import { hasPendingCommands, screenTables } from './auditReport';
import './auditReport.css';
import { PageTitle } from '../../../app/layout/PageTitle';

/** How often the report refreshes while a command awaits its device. */
export const AUDIT_REFRESH_MS = 3000;

export default function AuditReportPage({ screen }: { screen: Screen }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [typed, setTyped] = useState(() => readAuditImei());
  const [imei, setImei] = useState<string | null>(() => searchableImei(readAuditImei()));
  const file = useDownload();

  const report = useQuery({
    queryKey: deviceKeys.audit(imei ?? ''),
    queryFn: ({ signal }) => fetchAuditReport(api, imei ?? '', { signal }),
    enabled: imei !== null,
    refetchInterval: (query) => (hasPendingCommands(query.state.data?.commands) ? AUDIT_REFRESH_MS : false),
  });

  const search = () => {
    const valid = searchableImei(typed);
    if (!valid) {
      window.alert(MESSAGES.auditImeiLength);
      return;
    }
    if (valid === imei) void queryClient.invalidateQueries({ queryKey: deviceKeys.audit(valid) });
    else setImei(valid);
  };

  const loaded = imei !== null && report.data && !isAuditEmpty(report.data) ? report.data : null;
  /** Download Report: the xlsx the server writes, one sheet per section, in the browser's time zone. */
  const download = async () => {
    if (!loaded || !imei) return;
    const fallbackName = auditFileName(auditBrand(loaded), imei);
    try {
      await file.run(fallbackName, (options) => exportAuditReport(api, { imei, fallbackName }, options));
    } catch (error) {
      window.alert(refusalMessage(error, MESSAGES.reportFailure));
    }
  };

  return (
    <Stack data-print="report">
      <PageTitle screen={screen} />
      {imei ? <Text fw={500} data-testid="audit-imei">{`${L.imei}: ${imei}`}</Text> : null}
      <Group align="flex-end" data-print="hide">
        <TextInput
          label={L.imei}
          placeholder={MESSAGES.imeiHint}
          inputMode="numeric"
          maxLength={15}
          value={typed}
          onChange={(event) => {
            const value = event.currentTarget.value;
            setTyped(value);
            setImei(searchableImei(value));
          }}
          onKeyDown={(event) => {
            if (event.key === 'Enter') search();
          }}
          w={260}
        />
        <Button onClick={search}>{L.search}</Button>
        <Button variant="default" onClick={() => window.print()} disabled={!loaded}>
          {L.print}
        </Button>
        <Button variant="default" onClick={download} disabled={!loaded} loading={file.progress !== null}>
          {L.download}
        </Button>
      </Group>
      {imei ? <AuditSections query={report} /> : null}
    </Stack>
  );
}

function AuditSections({
  query,
}: {
  query: { isPending: boolean; isError: boolean; data: AuditResponse | undefined };
}) {
  if (query.isPending) {
    return (
      <Center p="md">
        <Loader />
      </Center>
    );
  }
  if (query.isError || !query.data) return <Text c="red">{MESSAGES.cannotFetch}</Text>;
  return (
    <Stack>
      {screenTables(query.data).map((table) => (
        <Section key={table.key} table={table} />
      ))}
    </Stack>
  );
}

function Section({ table }: { table: AuditTable }) {
  const statusColumn = table.key === 'commands' ? table.header.indexOf(L.status) : -1;
  return (
    <Card withBorder data-print="section" data-testid={`audit-${table.key}`}>
      <Title order={4} mb="xs">
        {table.title}
      </Title>
      {table.rows.length === 0 ? (
        <Text size="sm" c={table.key === 'registration' ? 'red' : 'dimmed'}>
          {table.key === 'registration' ? MESSAGES.auditEmpty : L.noRecords}
        </Text>
      ) : (
        <div className="audit-scroll">
          <Table striped withTableBorder stickyHeader>
            <Table.Thead>
              <Table.Tr>
                {table.header.map((title) => (
                  <Table.Th key={title}>{title}</Table.Th>
                ))}
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {table.rows.map((row, rowIndex) => (
                // Rows have no id of their own beyond their place in the server's ordered answer.
                // biome-ignore lint/suspicious/noArrayIndexKey: the report is replaced as a whole on refresh
                <Table.Tr key={rowIndex}>
                  {row.map((cell, column) => (
                    <Table.Td key={table.header[column]}>
                      {column === statusColumn ? <StatusBadge status={cell} /> : cell}
                    </Table.Td>
                  ))}
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </div>
      )}
    </Card>
  );
}

function StatusBadge({ status }: { status: string }) {
  return (
    <Badge
      color={statusColor(status)}
      variant="light"
      leftSection={isPendingStatus(status) ? <Loader size={10} color="yellow" /> : null}
    >
      {status}
    </Badge>
  );
}
