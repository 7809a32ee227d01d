/**
 * A plan as the console shows it, for the dry run and Today's Plan alike: why nothing runs (kill switch,
 * policy off), the counts per action and per reason not taken, the devices (a virtual table, paged by the
 * server's cursor, filtered by action) and the whole list as the server's CSV.
 */
import { COLLECTION_ACTIONS, type CollectionsPolicy, planFileName } from '@lendlock/contract';
import {
  Alert,
  Badge,
  Button,
  Card,
  Group,
  NativeSelect,
  Progress,
  SimpleGrid,
  Stack,
  Table,
  Text,
  Title,
} from '@mantine/core';
import { keepPreviousData, useInfiniteQuery } from '@tanstack/react-query';
import { useState } from 'react';
import {
  collectionKeys,
  exportPlan,
  fetchPlan,
  PLAN_PAGE_SIZE,
  type PlanFilter,
  type PlanQuery,
} from '../../api/collections';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { textColumns } from '../../components/columns';
import { downloadProgressText } from '../../components/downloadProgress';
import { useDownload } from '../../components/useDownload';
import { VirtualTable } from '../../components/VirtualTable';
import { collectionsFailureText } from '../../features/collections/labels';
import { ACTION_LABELS, COLLECTIONS_LABELS as L } from './labels';
import { actionCounts, haltText, PLAN_ITEM_COLUMNS, planItemCells, skipCounts } from './planView';

const ITEM_COLUMNS = textColumns(PLAN_ITEM_COLUMNS, planItemCells);
/** Result tables scroll at about 350 to 400 px. */
const ITEMS_HEIGHT = 380;

const FILTER_OPTIONS = [
  { value: 'ALL', label: L.all },
  ...COLLECTION_ACTIONS.map((action) => ({ value: action, label: ACTION_LABELS[action] })),
  { value: 'SKIPPED', label: L.skippedOnly },
];

export function PlanView({
  date,
  policy,
  policyEnabled,
  testId,
  level,
}: {
  /** The day planned; null: today in the policy's zone. */
  date: string | null;
  /** An unsaved policy to dry-run; null: the saved one. */
  policy: CollectionsPolicy | null;
  policyEnabled: boolean;
  testId: string;
  /** The plan's heading level (its device list's is one below). */
  level: 2 | 3;
}) {
  const { api } = useServices();
  const download = useDownload();
  const [filter, setFilter] = useState<PlanFilter>('ALL');
  const [downloadError, setDownloadError] = useState<string | null>(null);
  const query: PlanQuery = { date, policy, filter };
  const plan = useInfiniteQuery({
    queryKey: collectionKeys.plan(query, PLAN_PAGE_SIZE),
    queryFn: ({ pageParam, signal }) =>
      fetchPlan(api, { ...query, limit: PLAN_PAGE_SIZE, cursor: pageParam }, signal),
    initialPageParam: null as string | null,
    getNextPageParam: (last) => last.cursor,
    // Another filter keeps the plan shown until its first page arrives.
    placeholderData: keepPreviousData,
  });

  if (plan.isPending) return <PageLoader />;
  if (plan.isError)
    return (
      <Text c="red.8" role="alert">
        {collectionsFailureText(plan.error)}
      </Text>
    );

  const [first] = plan.data.pages;
  if (!first) return null;
  const items = plan.data.pages.flatMap((page) => page.items);
  const halted = haltText(first, policyEnabled);
  const skips = skipCounts(first.counts);

  const downloadCsv = async () => {
    setDownloadError(null);
    try {
      await download.run(planFileName(first.date), (options) =>
        exportPlan(api, { ...query, fallbackDate: first.date }, options),
      );
    } catch (failure) {
      setDownloadError(collectionsFailureText(failure));
    }
  };

  return (
    <Stack
      gap="sm"
      data-testid={testId}
      data-date={first.date}
      data-filter={filter}
      // Another filter's first page is on its way: the devices shown are still the previous filter's.
      data-state={plan.isPlaceholderData ? 'loading' : 'ready'}
      aria-busy={plan.isPlaceholderData}
    >
      <Group justify="space-between" align="center">
        <Title order={level} size="h4">
          {L.planTitle(first.date, first.timeZone)}
        </Title>
        <Badge variant="outline" color="gray.8">
          {L.version(first.version)}
        </Badge>
      </Group>
      <Text size="sm">{L.runsAt(first.runsAt, first.timeZone)}</Text>
      {halted ? (
        <Alert color="red" variant="light" data-testid="plan-halted">
          <Text fw={700}>{halted}</Text>
        </Alert>
      ) : null}
      <SimpleGrid cols={{ base: 1, md: 2 }}>
        <Table withTableBorder verticalSpacing={4} data-testid="plan-counts">
          <Table.Caption>{L.countsCaption}</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{L.action}</Table.Th>
              <Table.Th ta="right">{L.count}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {actionCounts(first.counts).map((row) => (
              <Table.Tr key={row.key} data-action={row.key}>
                <Table.Td>{row.label}</Table.Td>
                <Table.Td ta="right">{row.count}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
        <Table withTableBorder verticalSpacing={4} data-testid="plan-skips">
          <Table.Caption>{L.skippedCaption}</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{L.skippedReason}</Table.Th>
              <Table.Th ta="right">{L.count}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {skips.length === 0 ? (
              <Table.Tr>
                <Table.Td colSpan={2}>{L.noSkips}</Table.Td>
              </Table.Tr>
            ) : (
              skips.map((row) => (
                <Table.Tr key={row.key} data-skip={row.key}>
                  <Table.Td>{row.label}</Table.Td>
                  <Table.Td ta="right">{row.count}</Table.Td>
                </Table.Tr>
              ))
            )}
          </Table.Tbody>
        </Table>
      </SimpleGrid>
      <Card withBorder>
        <Group justify="space-between" align="flex-end" mb="xs">
          <Title order={level === 2 ? 3 : 4} size="h5">
            {L.items}
          </Title>
          <Group align="flex-end" gap="sm">
            <NativeSelect
              label={L.show}
              data={FILTER_OPTIONS}
              value={filter}
              onChange={(event) => setFilter(event.currentTarget.value as PlanFilter)}
              w={200}
            />
            <Button variant="default" onClick={() => void downloadCsv()} loading={download.progress !== null}>
              {L.downloadCsv}
            </Button>
          </Group>
        </Group>
        {download.progress ? (
          <Stack gap={4} mb="xs">
            <Text size="sm">{downloadProgressText(download.progress)}</Text>
            <Progress value={100} animated striped aria-label={L.downloadCsv} />
          </Stack>
        ) : null}
        {downloadError ? (
          <Text c="red.8" size="sm" role="alert" mb="xs">
            {downloadError}
          </Text>
        ) : null}
        {items.length === 0 ? (
          <Text size="sm">{L.noItems}</Text>
        ) : (
          <VirtualTable
            testId={`${testId}-items`}
            label={L.items}
            rows={items}
            rowKey={(item) => `${item.loanId}-${item.action}`}
            columns={ITEM_COLUMNS}
            height={ITEMS_HEIGHT}
          />
        )}
        <Group justify="space-between" mt="xs">
          <Text size="sm" data-testid={`${testId}-shown`}>
            {L.shown(items.length, plan.hasNextPage)}
          </Text>
          {plan.hasNextPage ? (
            <Button
              variant="default"
              size="xs"
              loading={plan.isFetchingNextPage}
              onClick={() => void plan.fetchNextPage()}
            >
              {L.loadMore}
            </Button>
          ) : null}
        </Group>
      </Card>
    </Stack>
  );
}
