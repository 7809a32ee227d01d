/**
 * A batch's per-IMEI results table: a selection at a time (all rows, found,
 * not found, or not found for one reason), read from the server in pages of RESULT_PAGE_ROWS by S.No. as
 * the table scrolls, so the first rows of a 200,000-row batch show after one page instead of after all
 * of them; the rows in a 350 px virtual table with the reason beside 'not found'; and Download CSV, the
 * selection's results file streamed by the server (imei_data.csv, or the Notify results named after the
 * uploaded file), with its progress while it arrives. Used by the batch panel's outcome and the Batches
 * screen alike.
 */
import {
  BATCH_NOT_FOUND_REASONS,
  type BatchKind,
  type BatchNotFoundReason,
  type BatchProgress,
  MESSAGES,
  resultsFileName,
} from '@lendlock/contract';
import { Button, Group, Loader, NativeSelect, Stack, Text } from '@mantine/core';
import { useInfiniteQuery } from '@tanstack/react-query';
import { useCallback, useMemo, useState } from 'react';
import { batchKeys, exportBatchResults, fetchBatchResults, type ResultSelection } from '../../api/batches';
import { refusalMessage } from '../../api/client';
import { useServices } from '../../app/services';
import { downloadProgressText } from '../../components/downloadProgress';
import { useDownload } from '../../components/useDownload';
import { VirtualTable } from '../../components/VirtualTable';
import { resultColumns } from './columns';
import { BATCH_LABELS } from './labels';

/** Rows per results call: one page shows at once, the next ones as the table scrolls to them. */
export const RESULT_PAGE_ROWS = 1_000;

/** The options of the Show select: a value per selection. */
const SELECTIONS: { value: string; label: string; selection: ResultSelection }[] = [
  { value: 'all', label: BATCH_LABELS.filterAll, selection: { filter: 'all' } },
  { value: 'found', label: BATCH_LABELS.filterFound, selection: { filter: 'found' } },
  { value: 'notFound', label: BATCH_LABELS.filterNotFound, selection: { filter: 'notFound' } },
  ...BATCH_NOT_FOUND_REASONS.map((reason: BatchNotFoundReason) => ({
    value: `notFound:${reason}`,
    label: BATCH_LABELS.filterReason(reason),
    selection: { filter: 'notFound', reason } satisfies ResultSelection,
  })),
];

export function BatchResults({
  batch,
  kind,
}: {
  batch: Pick<BatchProgress, 'batchId' | 'batchfilename' | 'phase'>;
  kind: BatchKind;
}) {
  const { api } = useServices();
  const files = useDownload();
  const [choice, setChoice] = useState('all');
  const selection = (SELECTIONS.find((s) => s.value === choice) ?? (SELECTIONS[0] as (typeof SELECTIONS)[0]))
    .selection;
  const results = useInfiniteQuery({
    queryKey: batchKeys.resultPages(batch.batchId, selection),
    queryFn: ({ pageParam, signal }) =>
      fetchBatchResults(
        api,
        { batchId: batch.batchId, offset: pageParam, limit: RESULT_PAGE_ROWS, ...selection },
        { signal },
      ),
    initialPageParam: 0,
    getNextPageParam: (last) =>
      last.items.length < RESULT_PAGE_ROWS ? undefined : (last.items.at(-1)?.sno ?? undefined),
    // A completed batch's results never change.
    staleTime: batch.phase === 'complete' ? Number.POSITIVE_INFINITY : 0,
  });
  const rows = useMemo(() => results.data?.pages.flatMap((page) => page.items) ?? [], [results.data]);
  const total = results.data?.pages.at(-1)?.total ?? 0;
  const { hasNextPage, isFetchingNextPage, fetchNextPage } = results;
  const loadMore = useCallback(() => {
    if (hasNextPage && !isFetchingNextPage) void fetchNextPage();
  }, [hasNextPage, isFetchingNextPage, fetchNextPage]);

  const fileName = resultsFileName(kind, batch.batchfilename);
  const download = async () => {
    if (results.data && total === 0) {
      window.alert(MESSAGES.noDataToDownload);
      return;
    }
    try {
      await files.run(fileName, (options) =>
        exportBatchResults(api, { batchId: batch.batchId, fallbackName: fileName, ...selection }, options),
      );
    } catch (error) {
      window.alert(refusalMessage(error, MESSAGES.cannotFetch));
    }
  };

  return (
    <Stack gap="xs" data-testid="batch-results-view">
      <Group justify="space-between" align="flex-end">
        <NativeSelect
          label={BATCH_LABELS.show}
          data={SELECTIONS.map(({ value, label }) => ({ value, label }))}
          value={choice}
          onChange={(event) => setChoice(event.currentTarget.value)}
          size="xs"
          data-testid="results-filter"
        />
        <Button
          size="xs"
          variant="light"
          onClick={download}
          loading={files.progress !== null}
          disabled={!results.data}
        >
          {BATCH_LABELS.downloadCsv}
        </Button>
      </Group>
      {files.progress ? (
        <Text size="sm" data-testid="results-download-progress">
          {downloadProgressText(files.progress)}
        </Text>
      ) : null}
      {results.data ? (
        <>
          <Text size="xs" c="dimmed" data-testid="results-count">
            {BATCH_LABELS.shownOf(rows.length, total)}
          </Text>
          {rows.length === 0 ? (
            <Text size="sm">{BATCH_LABELS.noRows}</Text>
          ) : (
            <VirtualTable
              rows={rows}
              columns={resultColumns(kind)}
              height={350}
              rowKey={(r) => r.sno}
              testId="batch-results"
              onEndReached={loadMore}
            />
          )}
          {isFetchingNextPage ? (
            <Group gap="xs">
              <Loader size="xs" />
              <Text size="sm">{BATCH_LABELS.loadingMore}</Text>
            </Group>
          ) : null}
        </>
      ) : results.isError ? (
        <Text size="sm" c="red">
          {MESSAGES.cannotFetch}
        </Text>
      ) : (
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">{BATCH_LABELS.loadingResults}</Text>
        </Group>
      )}
    </Stack>
  );
}
