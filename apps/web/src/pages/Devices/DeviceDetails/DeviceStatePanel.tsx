/** The device's current state: what it reports beside what is desired, and whether it is online. */
import type { DeviceRecord } from '@lendlock/contract';
import { Badge, Card, Group, Table, Text, Title } from '@mantine/core';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { formatLocalDateTime } from '../../../lib/datetime';
import { stateRows } from './deviceState';

export function DeviceStatePanel({ device }: { device: DeviceRecord }) {
  const rows = stateRows(device.desired, device.state);
  return (
    <Card withBorder data-testid="device-state">
      <Group justify="space-between" mb="xs">
        <Title order={4}>{`${L.stateTitle} · ${device.imei1}`}</Title>
        <Group gap="xs">
          <Badge color={device.online ? 'green' : 'gray'} data-testid="device-online">
            {device.online ? L.online : L.offline}
          </Badge>
          {device.last_seen_at ? (
            <Text size="sm" c="dimmed">{`${L.lastSeen}: ${formatLocalDateTime(device.last_seen_at)}`}</Text>
          ) : null}
        </Group>
      </Group>
      <Text size="sm" mb="xs">
        {`${L.manufacturer}: ${device.manufacturer} · ${L.brand}: ${device.brand} · ${L.model}: ${device.model} · ${L.matchStatus}: ${device.match_status}`}
      </Text>
      {device.state === null ? (
        <Text size="sm" c="dimmed">
          {L.stateNotReported}
        </Text>
      ) : null}
      <Table withTableBorder>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{L.stateSetting}</Table.Th>
            <Table.Th>{L.stateDesired}</Table.Th>
            <Table.Th>{L.stateReported}</Table.Th>
            <Table.Th />
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {rows.map((row) => (
            <Table.Tr key={row.key} data-testid={`state-${row.key}`}>
              <Table.Td>{row.label}</Table.Td>
              <Table.Td>{row.desired}</Table.Td>
              <Table.Td>{row.reported ?? '—'}</Table.Td>
              <Table.Td>
                {row.reported === null ? null : (
                  <Badge size="sm" color={row.pending ? 'yellow' : 'green'} variant="light">
                    {row.pending ? L.statePending : L.stateInSync}
                  </Badge>
                )}
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Card>
  );
}
