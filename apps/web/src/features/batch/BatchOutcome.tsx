/**
 * A finished batch (spec §2, §4.3): the processing time in ms, the summary (total, valid, invalid, found,
 * not found), the results in a 350 px scrolling table, and Download CSV (imei_data.csv, or the Notify
 * results named after the uploaded file). The results are read once, in pages, when the batch completes.
 */
import { type BatchProgress, MESSAGES } from '@lendlock/contract';
import { Button, Group, Loader, SimpleGrid, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { batchKeys, fetchAllBatchResults } from '../../api/batches';
import { useServices } from '../../app/services';
import { VirtualTable } from '../../components/VirtualTable';
import { downloadText } from '../csv/download';
import { formatMs } from '../csv/outcome';
import { type BatchKind, batchSummary } from './batchRules';
import { resultColumns } from './columns';
import { BATCH_LABELS } from './labels';
import { resultsCsv, resultsFileName } from './resultsCsv';

export function BatchOutcome({ batch, kind }: { batch: BatchProgress; kind: BatchKind }) {
  const { api } = useServices();
  const [preparing, setPreparing] = useState(false);
  const results = useQuery({
    queryKey: batchKeys.results(batch.batchId),
    queryFn: ({ signal }) => fetchAllBatchResults(api, batch.batchId, { signal }),
    // A completed batch's results never change.
    staleTime: Number.POSITIVE_INFINITY,
  });

  const download = async () => {
    if (!results.data || results.data.length === 0) {
      window.alert(MESSAGES.noDataToDownload);
      return;
    }
    setPreparing(true);
    try {
      downloadText(await resultsCsv(kind, results.data), resultsFileName(kind, batch.batchfilename));
    } finally {
      setPreparing(false);
    }
  };

  return (
    <Stack gap="sm" data-testid="batch-outcome">
      <Text size="sm" data-testid="processing-time">
        {`${BATCH_LABELS.processingTime}: ${formatMs(batch.elapsedMs)}`}
      </Text>
      <SimpleGrid cols={{ base: 3, sm: 5 }} spacing="xs" data-testid="batch-summary">
        {batchSummary(batch).map(({ key, value }) => (
          <div key={key}>
            <Text size="xs" c="dimmed">
              {BATCH_LABELS[key]}
            </Text>
            <Text fw={600} data-testid={`summary-${key}`}>
              {value}
            </Text>
          </div>
        ))}
      </SimpleGrid>
      <Group justify="flex-end">
        <Button size="xs" variant="light" onClick={download} loading={preparing} disabled={!results.data}>
          {BATCH_LABELS.downloadCsv}
        </Button>
      </Group>
      {results.data ? (
        <VirtualTable
          rows={results.data}
          columns={resultColumns(kind)}
          height={350}
          rowKey={(r) => r.sno}
          testId="batch-results"
        />
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
