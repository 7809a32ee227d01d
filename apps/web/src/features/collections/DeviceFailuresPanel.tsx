/**
 * Device Details' failed automated actions: the collections LOCK, UNLOCK or RELEASE commands
 * this device reported failed, each Retrying (n of N) or Failed, with why and when the next attempt is due.
 * For ADMIN and SUPERADMIN (a USER sees nothing: collections are theirs); shown only when there is one.
 */
import { Card, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { collectionKeys, listFailures } from '../../api/collections';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { formatLocalDateTime } from '../../lib/datetime';
import { failureText, FAILURE_LABELS as L } from './labels';

export function DeviceFailuresPanel({ imei }: { imei: string }) {
  const session = useSession();
  if (session?.userlevel !== 'ADMIN' && session?.userlevel !== 'SUPERADMIN') return null;
  return <FailuresCard imei={imei} />;
}

function FailuresCard({ imei }: { imei: string }) {
  const { api } = useServices();
  const failures = useQuery({
    queryKey: collectionKeys.failures(imei),
    queryFn: ({ signal }) => listFailures(api, imei, signal),
    refetchInterval: 60_000,
  });
  const items = failures.data ?? [];
  if (items.length === 0) return null;
  return (
    <Card withBorder data-testid="device-failures">
      <Stack gap="xs">
        <Title order={4}>{L.title}</Title>
        <Text size="sm">{L.intro}</Text>
        <Table.ScrollContainer minWidth={640}>
          <Table>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{L.action}</Table.Th>
                <Table.Th>{L.day}</Table.Th>
                <Table.Th>{L.status}</Table.Th>
                <Table.Th>{L.result}</Table.Th>
                <Table.Th>{L.nextAttempt}</Table.Th>
                <Table.Th>{L.rule}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {items.map((item) => (
                <Table.Tr key={item.id}>
                  <Table.Td>{item.action}</Table.Td>
                  <Table.Td>{item.actionDate}</Table.Td>
                  <Table.Td>
                    <Text size="sm" c={item.state === 'FAILED' ? 'red.8' : undefined} fw={700}>
                      {failureText({ state: item.state, attempts: item.attempts, of: item.maxAttempts })}
                    </Text>
                  </Table.Td>
                  <Table.Td>{item.result ?? ''}</Table.Td>
                  <Table.Td>{item.retryAt ? formatLocalDateTime(item.retryAt) : ''}</Table.Td>
                  <Table.Td>{item.rule}</Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
      </Stack>
    </Card>
  );
}
