/**
 * While a batch uploads and runs, 'Please Wait while we are executing this batch...' over the
 * panel, with a progress bar (processed of valid rows, read every 500 ms) and a Pause button. The batch
 * runs on the server: closing the tab does not stop it.
 */
import { type BatchProgress, MESSAGES } from '@lendlock/contract';
import { Button, LoadingOverlay, Progress, Stack, Text } from '@mantine/core';
import type { UploadProgress as Sent } from '../../api/xhrFetch';
import { progressPercent } from './batchRules';
import { BATCH_LABELS } from './labels';
import { UploadProgress } from './UploadProgress';

export function RunningOverlay({
  visible,
  progress,
  sent,
  onPause,
  pausing,
}: {
  visible: boolean;
  /** The batch's progress; undefined while the file uploads. */
  progress: BatchProgress | undefined;
  /** While the file uploads: how much of it was sent. */
  sent: Sent | null;
  onPause: () => void;
  pausing: boolean;
}) {
  return (
    <LoadingOverlay
      visible={visible}
      zIndex={20}
      overlayProps={{ backgroundOpacity: 0.94, blur: 2 }}
      loaderProps={{
        children: (
          <Stack align="center" gap="xs" w={300} data-testid="batch-running">
            <Text fw={500} ta="center" role="status">
              {MESSAGES.executingBatch}
            </Text>
            {progress?.batchfilename ? (
              <Text size="sm" c="dimmed">{`${BATCH_LABELS.fileName}: ${progress.batchfilename}`}</Text>
            ) : null}
            {!progress && sent ? (
              <UploadProgress sent={sent} />
            ) : (
              <Progress
                w="100%"
                size="lg"
                value={progress ? progressPercent(progress) : 100}
                striped={!progress}
                animated={!progress}
                aria-label={MESSAGES.executingBatch}
              />
            )}
            {progress ? (
              <>
                <Text size="sm" data-testid="batch-progress">
                  {BATCH_LABELS.progress(progress.processed, progress.valid)}
                </Text>
                <Button size="xs" variant="default" onClick={onPause} loading={pausing}>
                  {BATCH_LABELS.pause}
                </Button>
              </>
            ) : null}
          </Stack>
        ),
      }}
    />
  );
}
