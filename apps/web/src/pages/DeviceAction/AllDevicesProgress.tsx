/**
 * Progress of a device action sent to ALL (one command per enrolled device, each with its
 * own status): polls `/api/v2/batchStatus` every second while any device has not yet answered, showing
 * the total and the count per status.
 */
import { COMMAND_STATUSES, PENDING_STATUSES } from '@lendlock/contract';
import { Card, Progress, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { commandKeys, fetchBatchStatus } from '../../api/commands';
import { useServices } from '../../app/services';
import { DEVICE_ACTION_LABELS } from './labels';

const pendingOf = (byStatus: Record<string, number>) =>
  PENDING_STATUSES.reduce((sum, status) => sum + (byStatus[status] ?? 0), 0);

export function AllDevicesProgress({ batchId, action }: { batchId: number; action: string }) {
  const { api } = useServices();
  const query = useQuery({
    queryKey: commandKeys.batch(batchId),
    queryFn: ({ signal }) => fetchBatchStatus(api, batchId, { signal }),
    refetchInterval: (q) => {
      if (q.state.status === 'error') return false;
      const data = q.state.data;
      if (data && pendingOf(data.byStatus) === 0) return false;
      return q.state.dataUpdateCount < 60 ? 1_000 : 5_000;
    },
  });
  const data = query.data;
  const total = data?.total ?? 0;
  const finished = data ? total - pendingOf(data.byStatus) : 0;

  return (
    <Card withBorder padding="md" data-testid="all-devices-progress">
      <Stack gap="xs">
        <Title order={5}>{DEVICE_ACTION_LABELS.progressTitle(action)}</Title>
        <Text size="sm" data-testid="all-devices-total">
          {DEVICE_ACTION_LABELS.total}: {total}
        </Text>
        <Progress
          value={total === 0 ? 0 : (finished / total) * 100}
          aria-label={DEVICE_ACTION_LABELS.done(finished, total)}
        />
        <Text size="sm" c="dimmed" data-testid="all-devices-done">
          {DEVICE_ACTION_LABELS.done(finished, total)}
        </Text>
        <Table verticalSpacing={4} withTableBorder>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{DEVICE_ACTION_LABELS.statusColumn}</Table.Th>
              <Table.Th>{DEVICE_ACTION_LABELS.countColumn}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {COMMAND_STATUSES.filter((status) => (data?.byStatus[status] ?? 0) > 0).map((status) => (
              <Table.Tr key={status} data-testid={`all-devices-${status}`}>
                <Table.Td>{status}</Table.Td>
                <Table.Td>{data?.byStatus[status]}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </Stack>
    </Card>
  );
}
