/**
 * The live status of a sent command: polls `/api/v2/commandStatus` every second until
 * the device's own acknowledgement ends it, reading 'pending' → 'delivered' → 'executed' or 'failed',
 * as Knox Guard's "Locking…" and Fleet's "Lock pending" do.
 */
import { Badge, Group, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { commandKeys, fetchCommandStatus } from '../../api/commands';
import { useServices } from '../../app/services';
import { isPendingStatus, statusColor, statusLabel } from '../../components/commandStatus';
import { COMMAND_LABELS } from './labels';

/** Every second for the first minute, then every 5 s while the device is still away. */
const pollEvery = (updates: number) => (updates < 60 ? 1_000 : 5_000);

export function CommandStatus({
  transactionId,
  label,
  testId = 'command-status',
}: {
  transactionId: string;
  /** What was sent to which IMEI, e.g. 'Lock → 356938035643809'. */
  label?: string;
  testId?: string;
}) {
  const { api } = useServices();
  const query = useQuery({
    queryKey: commandKeys.status(transactionId),
    queryFn: ({ signal }) => fetchCommandStatus(api, transactionId, { signal }),
    refetchInterval: (q) => {
      if (q.state.status === 'error') return false;
      const status = q.state.data?.status;
      return status === undefined || isPendingStatus(status) ? pollEvery(q.state.dataUpdateCount) : false;
    },
  });
  // Until the first answer, the command reads as queued.
  const status = query.data?.status ?? 'QUEUED';
  return (
    <Group gap="xs" wrap="nowrap" aria-live="polite">
      {label ? (
        <Text size="sm" c="dimmed">
          {label}
        </Text>
      ) : null}
      <Badge
        variant="light"
        color={statusColor(status)}
        data-testid={testId}
        data-status={query.data?.status}
      >
        {statusLabel(status)}
      </Badge>
      {query.data?.result && query.data.status === 'FAILED' ? (
        <Text size="sm" c="red">
          {query.data.result}
        </Text>
      ) : null}
    </Group>
  );
}

/** The live status under its heading, for the single forms. */
export function LiveStatus({ transactionId, label }: { transactionId: string; label: string }) {
  return (
    <Group gap="xs" mt="sm">
      <Text size="sm" fw={500}>
        {COMMAND_LABELS.liveStatus}:
      </Text>
      <CommandStatus transactionId={transactionId} label={label} />
    </Group>
  );
}
