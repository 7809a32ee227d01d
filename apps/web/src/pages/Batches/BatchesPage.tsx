/**
 * The Batches screen (not a screen of the spec): every batch the user may see, newest first
 * (a USER their own, of the screens they hold; ADMIN and SUPERADMIN also those of lower levels, as the
 * server decides), with its command, file, owner, counts, phase and times, read in pages as the list
 * scrolls. Open shows one batch (`?batch=<id>`, so the address can be kept): its facts, its summary and
 * its results (BatchResults: filtered by found / not found / reason, a page at a time, and Download CSV
 * streamed by the server). A finished batch's results stay reachable after its tab is closed.
 */
import { type BatchListItem, batchKindOf, MESSAGES, type Screen } from '@lendlock/contract';
import { Anchor, Button, Card, Center, Group, Loader, Stack, Text, Title } from '@mantine/core';
import { useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { useCallback, useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { batchKeys, fetchBatchList, fetchBatchProgress } from '../../api/batches';
import { refusalMessage } from '../../api/client';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { textColumns, type VirtualColumn } from '../../components/columns';
import { VirtualTable } from '../../components/VirtualTable';
import { BatchSummary } from '../../features/batch/BatchOutcome';
import { BatchResults } from '../../features/batch/BatchResults';
import { progressPollMs } from '../../features/batch/batchRules';
import { formatMs } from '../../features/csv/outcome';
import { formatLocalDateTime } from '../../lib/datetime';
import { BATCH_LIST_COLUMNS, batchCells, batchCommandText, phaseText } from './columns';
import { BATCHES_LABELS as L } from './labels';

/** Batches per list call. */
const LIST_PAGE = 100;
/** Result tables scroll at about 350 to 400 px. */
const LIST_HEIGHT = 400;

export default function BatchesPage({ screen }: { screen: Screen }) {
  const [params] = useSearchParams();
  const chosen = Number(params.get('batch'));
  return (
    <Stack>
      <PageTitle screen={screen} />
      {Number.isInteger(chosen) && chosen > 0 ? <BatchDetail batchId={chosen} /> : <BatchList />}
    </Stack>
  );
}

function BatchList() {
  const { api } = useServices();
  const list = useInfiniteQuery({
    queryKey: batchKeys.list(null),
    queryFn: ({ pageParam, signal }) =>
      fetchBatchList(api, { limit: LIST_PAGE, ...(pageParam ? { before: pageParam } : {}) }, { signal }),
    initialPageParam: 0,
    getNextPageParam: (last) => last.next ?? undefined,
    // While a listed batch runs, its counts move.
    refetchInterval: (query) =>
      query.state.data?.pages.some((page) => page.items.some((b) => b.phase === 'running')) ? 3_000 : false,
  });
  const rows = useMemo(() => list.data?.pages.flatMap((page) => page.items) ?? [], [list.data]);
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = list;
  const loadMore = useCallback(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);
  const columns = useMemo<VirtualColumn<BatchListItem>[]>(
    () => [
      ...textColumns(BATCH_LIST_COLUMNS, batchCells),
      {
        header: L.open,
        width: 90,
        cell: (batch) => (
          <Button
            component={Link}
            to={`?batch=${batch.batchId}`}
            size="compact-xs"
            variant="light"
            aria-label={L.openBatch(batch.batchId)}
          >
            {L.open}
          </Button>
        ),
      },
    ],
    [],
  );

  if (list.isPending) {
    return (
      <Center p="md">
        <Loader />
      </Center>
    );
  }
  if (list.isError) return <Text c="red">{refusalMessage(list.error, MESSAGES.cannotFetch)}</Text>;
  return (
    <Card withBorder padding="md">
      <Stack gap="xs">
        <Text size="sm" c="dimmed">
          {L.intro}
        </Text>
        {rows.length === 0 ? (
          <Text data-testid="no-batches">{L.noBatches}</Text>
        ) : (
          <>
            <Text size="xs" c="dimmed" data-testid="batches-count">
              {L.shown(rows.length, hasNextPage)}
            </Text>
            <VirtualTable
              rows={rows}
              columns={columns}
              height={LIST_HEIGHT}
              rowKey={(batch) => batch.batchId}
              testId="batch-list"
              label={L.listLabel}
              onEndReached={loadMore}
            />
          </>
        )}
        {isFetchingNextPage ? (
          <Group gap="xs">
            <Loader size="xs" />
            <Text size="sm">{L.loadingMore}</Text>
          </Group>
        ) : null}
      </Stack>
    </Card>
  );
}

function BatchDetail({ batchId }: { batchId: number }) {
  const { api } = useServices();
  const progress = useQuery({
    queryKey: batchKeys.progress(batchId),
    queryFn: ({ signal }) => fetchBatchProgress(api, batchId, { signal }),
    refetchInterval: (query) => progressPollMs(query.state.data),
    retry: false,
  });
  const back = (
    <Anchor component={Link} to="?" size="sm" data-testid="batches-back">
      {`← ${L.back}`}
    </Anchor>
  );
  if (progress.isPending) {
    return (
      <Stack>
        {back}
        <Center p="md">
          <Loader />
        </Center>
      </Stack>
    );
  }
  if (progress.isError) {
    return (
      <Stack>
        {back}
        <Text c="red" data-testid="batch-refused">
          {refusalMessage(progress.error, MESSAGES.cannotFetch)}
        </Text>
      </Stack>
    );
  }
  const batch = progress.data;
  const facts: [string, string][] = [
    [L.command, batchCommandText(batch)],
    [L.file, batch.batchfilename ?? L.noFile],
    [L.phase, phaseText(batch.phase)],
    [L.created, formatLocalDateTime(batch.createdAt)],
    [L.started, batch.startedAt ? formatLocalDateTime(batch.startedAt) : ''],
    [L.finished, batch.completedAt ? formatLocalDateTime(batch.completedAt) : ''],
    [L.processingTime, formatMs(batch.elapsedMs)],
  ];
  return (
    <Stack>
      {back}
      <Card withBorder padding="md" data-testid="batch-detail">
        <Stack gap="sm">
          <Title order={2} size="h4">
            {L.detailTitle(batch.batchId)}
          </Title>
          <Group gap="lg" data-testid="batch-facts">
            {facts.map(([label, value]) => (
              <div key={label}>
                <Text size="xs" c="dimmed">
                  {label}
                </Text>
                <Text size="sm" data-testid={`fact-${label}`}>
                  {value}
                </Text>
              </div>
            ))}
          </Group>
          <BatchSummary batch={batch} />
          <BatchResults key={batch.batchId} batch={batch} kind={batchKindOf(batch.command)} />
        </Stack>
      </Card>
    </Stack>
  );
}
