/**
 * The device's current state: what it reports beside what is desired, each setting's standing (from the
 * server), and whether it is online. A de-enrolled device shows what it last reported and what it gets
 * again when it registers again; a released one says it accepts no further commands.
 */
import { type DeviceRecord, MESSAGES } from '@lendlock/contract';
import { Badge, Card, Group, Table, Text, Title } from '@mantine/core';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { formatLocalDateTime } from '../../../lib/datetime';
import { STANDING_BADGES, stateRows } from './deviceState';

export function DeviceStatePanel({ device }: { device: DeviceRecord }) {
  const rows = stateRows(device);
  const deenrolled = device.claimstatus === 'DEENROLLED';
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
      {deenrolled ? (
        <Text size="sm" mb="xs" data-testid="device-state-note">
          {`${MESSAGES.commandDeenrolled} ${L.stateDeenrolled}`}
        </Text>
      ) : device.claimstatus === 'RELEASED' ? (
        <Text size="sm" mb="xs" data-testid="device-state-note">
          {MESSAGES.commandReleased}
        </Text>
      ) : null}
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
            <Table.Th>{deenrolled ? L.stateLastReported : L.stateReported}</Table.Th>
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
                {row.standing === null ? null : (
                  <Badge size="sm" color={STANDING_BADGES[row.standing].color} variant="light">
                    {STANDING_BADGES[row.standing].label}
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
