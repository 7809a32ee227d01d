/**
 * Today's Plan: the kill switch first, then what the saved policy does today in the lender's zone (counts
 * per action, reasons not taken, the devices with a filter by action) and the recent daily runs.
 */
import { Badge, Stack, Table, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { collectionKeys, fetchPolicy, listRuns } from '../../api/collections';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { QueryTable } from '../../components/QueryTable';
import { collectionsFailureText } from '../../features/collections/labels';
import { formatLocalDateTime } from '../../lib/datetime';
import { KillSwitchCard } from './KillSwitchCard';
import { COLLECTIONS_LABELS as L } from './labels';
import { PlanView } from './PlanView';
import { actionsToSend } from './planView';

export function TodayPlanTab() {
  const { api } = useServices();
  const policy = useQuery({
    queryKey: collectionKeys.policy(),
    queryFn: ({ signal }) => fetchPolicy(api, signal),
  });
  return (
    <Stack gap="lg">
      <KillSwitchCard />
      {policy.isPending ? (
        <PageLoader />
      ) : policy.isError ? (
        <Text c="red.8" role="alert">
          {collectionsFailureText(policy.error)}
        </Text>
      ) : (
        <PlanView
          date={null}
          policy={null}
          policyEnabled={policy.data.policy.enabled}
          testId="today-plan"
          level={2}
        />
      )}
      <Runs />
    </Stack>
  );
}

const RUN_COLOURS = { RUNNING: 'yellow.9', DONE: 'green.9', STOPPED: 'red.8' } as const;

function Runs() {
  const { api } = useServices();
  const runs = useQuery({
    queryKey: collectionKeys.runs(),
    queryFn: ({ signal }) => listRuns(api, signal),
    refetchInterval: 30_000,
  });
  return (
    <Stack gap="xs">
      <Title order={2} size="h4">
        {L.runs}
      </Title>
      <QueryTable
        query={runs}
        failureText={collectionsFailureText}
        empty={L.noRuns}
        label={L.runs}
        testId="collection-runs"
        minWidth={720}
        columns={[
          L.runDate,
          L.state,
          L.versionCol,
          L.startedAt,
          L.finishedAt,
          { label: L.processed, right: true },
          { label: L.actionsSent, right: true },
          { label: L.resumes, right: true },
        ]}
        row={(run) => (
          <Table.Tr key={run.id}>
            <Table.Td>{run.runDate}</Table.Td>
            <Table.Td>
              <Badge variant="outline" color={RUN_COLOURS[run.state]}>
                {run.state}
              </Badge>
            </Table.Td>
            <Table.Td>{run.version}</Table.Td>
            <Table.Td>{formatLocalDateTime(run.startedAt)}</Table.Td>
            <Table.Td>{run.finishedAt ? formatLocalDateTime(run.finishedAt) : '—'}</Table.Td>
            <Table.Td ta="right">{run.processed}</Table.Td>
            <Table.Td ta="right">{actionsToSend(run.counts)}</Table.Td>
            <Table.Td ta="right">{run.resumes}</Table.Td>
          </Table.Tr>
        )}
      />
    </Stack>
  );
}
