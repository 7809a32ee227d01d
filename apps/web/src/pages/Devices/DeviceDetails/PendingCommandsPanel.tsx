/**
 * The device's commands not yet acknowledged by it (QUEUED, SENT, DELIVERED), refreshed every few
 * seconds, each cancellable after a confirmation naming the command and the IMEI (a declined one sends
 * nothing); the server's answer is alerted as-is (a command already sent cannot be cancelled, nor one
 * issued by a higher level).
 */
import { displayCommand, type ExecutedCommandRow, MESSAGES } from '@lendlock/contract';
import { Badge, Button, Card, Center, Loader, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../../../api/client';
import { cancelCommand, deviceKeys, fetchPendingCommands } from '../../../api/devices';
import { useServices } from '../../../app/services';
import { statusColor } from '../../../components/commandStatus';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { formatLocalDateTime } from '../../../lib/datetime';

export const PENDING_REFRESH_MS = 5000;

/** What the Cancel button does, step by step (the steps are injected so a test can run them). */
export interface CancelSteps {
  confirm(question: string): boolean;
  alert(message: string): void;
  cancel(transactionId: string): Promise<{ message: string }>;
  refetch(): Promise<unknown>;
}

/**
 * Asks before cancelling a pending command, naming it and the device; a declined confirmation sends
 * nothing. The server's answer, or its refusal, is alerted. Returns whether the cancel was sent.
 */
export async function confirmAndCancel(
  imei: string,
  command: Pick<ExecutedCommandRow, 'transactionId' | 'command'>,
  steps: CancelSteps,
): Promise<boolean> {
  if (!steps.confirm(L.confirmCancel(displayCommand(command.command), imei))) return false;
  try {
    steps.alert((await steps.cancel(command.transactionId)).message);
  } catch (error) {
    steps.alert(
      error instanceof ApiError && error.serverMessage ? error.serverMessage : MESSAGES.cannotFetch,
    );
  }
  await steps.refetch();
  return true;
}

export function PendingCommandsPanel({ imei }: { imei: string }) {
  return (
    <Card withBorder data-testid="pending-commands">
      <Title order={4} mb="xs">
        {L.pendingTitle}
      </Title>
      <PendingCommandsList imei={imei} />
    </Card>
  );
}

function PendingCommandsList({ imei }: { imei: string }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const pending = useQuery({
    queryKey: deviceKeys.pendingCommands(imei),
    queryFn: ({ signal }) => fetchPendingCommands(api, imei, { signal }),
    refetchInterval: PENDING_REFRESH_MS,
  });
  const cancel = useMutation({
    mutationFn: (command: ExecutedCommandRow) =>
      confirmAndCancel(imei, command, {
        confirm: (question) => window.confirm(question),
        alert: (message) => window.alert(message),
        cancel: (transactionId) => cancelCommand(api, transactionId),
        refetch: () =>
          Promise.all([
            queryClient.invalidateQueries({ queryKey: deviceKeys.pendingCommands(imei) }),
            queryClient.invalidateQueries({ queryKey: deviceKeys.details(imei) }),
          ]),
      }),
  });

  if (pending.isPending) {
    return (
      <Center>
        <Loader size="sm" />
      </Center>
    );
  }
  if (pending.isError) return <Text c="red">{MESSAGES.cannotFetch}</Text>;
  if (pending.data.items.length === 0) {
    return (
      <Text size="sm" c="dimmed">
        {L.pendingNone}
      </Text>
    );
  }
  return (
    <Table withTableBorder>
      <Table.Thead>
        <Table.Tr>
          <Table.Th>{L.command}</Table.Th>
          <Table.Th>{L.status}</Table.Th>
          <Table.Th>{L.interface}</Table.Th>
          <Table.Th>{L.user}</Table.Th>
          <Table.Th>{L.createdAt}</Table.Th>
          <Table.Th />
        </Table.Tr>
      </Table.Thead>
      <Table.Tbody>
        {pending.data.items.map((command) => (
          <Table.Tr key={command.transactionId}>
            <Table.Td>{displayCommand(command.command)}</Table.Td>
            <Table.Td>
              <Badge color={statusColor(command.status)} variant="light">
                {command.status}
              </Badge>
            </Table.Td>
            <Table.Td>{command.interface}</Table.Td>
            <Table.Td>{command.user}</Table.Td>
            <Table.Td>{formatLocalDateTime(command.createdat)}</Table.Td>
            <Table.Td>
              <Button
                size="compact-xs"
                color="red"
                variant="light"
                loading={cancel.isPending && cancel.variables?.transactionId === command.transactionId}
                onClick={() => cancel.mutate(command)}
              >
                {L.cancel}
              </Button>
            </Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  );
}
