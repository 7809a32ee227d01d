/**
 * A batch that stopped before its end (Pause, or its server stopped) shows 'Incomplete Batch
 * Available' with the file name and the last processed IMEI. Process resumes it after that IMEI; Cancel
 * (absent on Notify and Set Wallpaper) hides the card for now; New Batch discards it. A batch the server
 * paused because its owner lost standing shows the reason.
 */
import { type BatchProgress, MESSAGES } from '@lendlock/contract';
import { Alert, Button, Card, Group, Stack, Text, Title } from '@mantine/core';
import type { ResumeOptions } from './batchRules';
import { BATCH_LABELS } from './labels';

export function ResumeCard({
  batch,
  options,
  onProcess,
  onCancel,
  onNewBatch,
  busy,
}: {
  batch: BatchProgress;
  options: ResumeOptions;
  onProcess: () => void;
  onCancel: () => void;
  onNewBatch: () => void;
  busy: 'process' | 'newBatch' | null;
}) {
  return (
    <Card withBorder padding="md" data-testid="resume-card">
      <Stack gap="xs">
        <Title order={4}>{MESSAGES.incompleteBatch}</Title>
        {batch.pausedReason ? (
          // The server paused it on its own (its owner's account disabled, its key deactivated): say why.
          <Alert color="orange" data-testid="resume-reason">
            {batch.pausedReason}
          </Alert>
        ) : null}
        <Text size="sm" data-testid="resume-file">
          {`${BATCH_LABELS.fileName}: ${batch.batchfilename ?? ''}`}
        </Text>
        <Text size="sm" data-testid="resume-last-imei">
          {`${BATCH_LABELS.lastImei}: ${batch.lastimei ?? BATCH_LABELS.none}`}
        </Text>
        <Text size="sm" c="dimmed">
          {BATCH_LABELS.progress(batch.processed, batch.valid)}
        </Text>
        <Group gap="sm">
          <Button onClick={onProcess} loading={busy === 'process'} disabled={busy !== null}>
            {BATCH_LABELS.process}
          </Button>
          {options.cancel ? (
            <Button variant="default" onClick={onCancel} disabled={busy !== null}>
              {BATCH_LABELS.cancel}
            </Button>
          ) : null}
          <Button
            variant="light"
            color="red"
            onClick={onNewBatch}
            loading={busy === 'newBatch'}
            disabled={busy !== null}
          >
            {BATCH_LABELS.newBatch}
          </Button>
        </Group>
      </Stack>
    </Card>
  );
}
