/**
 * The device list of Device Details and Last Command Reports: S.No., Action (View Audit),
 * IMEI 1, IMEI 2, Enrollment Status, Registration Status, App Version, App Type, Last Command, Created At.
 * Long lists are paged so a 10,000-device answer stays quick to render.
 */
import { type DeviceRecord, displayCommand } from '@lendlock/contract';
import { Button, Group, Pagination, ScrollArea, Table, Text } from '@mantine/core';
import { useState } from 'react';
import { formatLocalDateTime } from '../../lib/datetime';
import { useOpenAudit } from '../audit/openAudit';
import { DEVICE_LABELS } from './labels';
import { pageOf } from './paging';

export function DeviceTable({ items }: { items: readonly DeviceRecord[] }) {
  const openAudit = useOpenAudit();
  const [page, setPage] = useState(1);
  const view = pageOf(items, page);
  const L = DEVICE_LABELS;
  return (
    <>
      <ScrollArea type="auto">
        <Table striped highlightOnHover withTableBorder data-testid="device-table">
          <Table.Thead>
            <Table.Tr>
              {[
                L.sno,
                L.action,
                L.imei1,
                L.imei2,
                L.enrollmentStatus,
                L.registrationStatus,
                L.appVersion,
                L.appType,
                L.lastCommand,
                L.createdAt,
              ].map((title) => (
                <Table.Th key={title}>{title}</Table.Th>
              ))}
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {view.rows.map((device, index) => (
              <Table.Tr key={device.imei1}>
                <Table.Td>{view.start + index + 1}</Table.Td>
                <Table.Td>
                  <Button size="compact-xs" variant="light" onClick={() => openAudit(device.imei1)}>
                    {L.viewAudit}
                  </Button>
                </Table.Td>
                <Table.Td>{device.imei1}</Table.Td>
                <Table.Td>{device.imei2 ?? ''}</Table.Td>
                <Table.Td>{device.claimstatus}</Table.Td>
                <Table.Td>{device.registrationstatus}</Table.Td>
                <Table.Td>{device.appversion}</Table.Td>
                <Table.Td>{device.apptype}</Table.Td>
                <Table.Td>{device.command ? displayCommand(device.command) : ''}</Table.Td>
                <Table.Td>{formatLocalDateTime(device.createdat)}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea>
      {view.pages > 1 ? (
        <Group justify="space-between" mt="xs">
          <Text size="sm" c="dimmed">
            {`${view.start + 1}–${view.start + view.rows.length} / ${items.length}`}
          </Text>
          <Pagination size="sm" total={view.pages} value={view.page} onChange={setPage} />
        </Group>
      ) : null}
    </>
  );
}
