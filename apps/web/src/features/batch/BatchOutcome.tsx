/**
 * A finished batch: the processing time in ms, the summary (total, valid, invalid, found,
 * not found), and its results (BatchResults): read from the server a page at a time, with the reason
 * beside 'not found', and Download CSV (imei_data.csv, or the Notify results named after the uploaded
 * file), streamed by the server.
 */
import type { BatchProgress } from '@lendlock/contract';
import { SimpleGrid, Stack, Text } from '@mantine/core';
import { formatMs } from '../csv/outcome';
import { BatchResults } from './BatchResults';
import { type BatchKind, batchSummary } from './batchRules';
import { BATCH_LABELS } from './labels';

export function BatchOutcome({ batch, kind }: { batch: BatchProgress; kind: BatchKind }) {
  return (
    <Stack gap="sm" data-testid="batch-outcome">
      <Text size="sm" data-testid="processing-time">
        {`${BATCH_LABELS.processingTime}: ${formatMs(batch.elapsedMs)}`}
      </Text>
      <BatchSummary batch={batch} />
      <BatchResults batch={batch} kind={kind} />
    </Stack>
  );
}

/** The batch summary: total, valid, invalid, found, not found. */
export function BatchSummary({ batch }: { batch: BatchProgress }) {
  return (
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
  );
}
