/**
 * Enable Notification's File Preview: before a Notify batch is uploaded, its rows with their
 * generated header and message, in a body at most 300 px high, with Cancel and Submit.
 */
import type { NotifyRow } from '@lendlock/contract';
import { Button, Group, Modal, Stack, Text } from '@mantine/core';
import { VirtualTable } from '../../components/VirtualTable';
import { NOTIFY_PREVIEW_COLUMNS } from './columns';
import { BATCH_LABELS } from './labels';

export function FilePreview({
  rows,
  onCancel,
  onSubmit,
}: {
  /** The rows to preview; null when the preview is closed. */
  rows: readonly NotifyRow[] | null;
  onCancel: () => void;
  onSubmit: () => void;
}) {
  return (
    <Modal opened={rows !== null} onClose={onCancel} title={BATCH_LABELS.filePreview} size="xl" centered>
      {rows ? (
        <Stack gap="sm" data-testid="file-preview">
          <Text size="sm" c="dimmed">
            {BATCH_LABELS.previewCount(rows.length)}
          </Text>
          <VirtualTable
            rows={rows}
            columns={NOTIFY_PREVIEW_COLUMNS}
            height={300}
            testId="file-preview-rows"
          />
          <Group justify="flex-end" gap="sm">
            <Button variant="default" onClick={onCancel}>
              {BATCH_LABELS.cancel}
            </Button>
            <Button onClick={onSubmit}>{BATCH_LABELS.submit}</Button>
          </Group>
        </Stack>
      ) : null}
    </Modal>
  );
}
