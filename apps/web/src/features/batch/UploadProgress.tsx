/**
 * While a batch CSV uploads, how much of it has been sent, as a progress bar named
 * 'Upload progress' (role progressbar, its percent as value) and as '2.5 MB of 5.0 MB sent (50%)'.
 */
import { Progress, Text } from '@mantine/core';
import type { UploadProgress as Sent } from '../../api/xhrFetch';
import { formatBytes } from '../../components/downloadProgress';
import { BATCH_LABELS } from './labels';

/** Whole percent sent, 0–100 (0 until the size is known). */
export function uploadPercent({ loaded, total }: Sent): number {
  if (total <= 0) return 0;
  return Math.min(100, Math.floor((loaded / total) * 100));
}

export function UploadProgress({ sent }: { sent: Sent }) {
  const percent = uploadPercent(sent);
  return (
    <>
      <Progress w="100%" size="lg" value={percent} aria-label={BATCH_LABELS.uploadProgress} />
      <Text size="sm" data-testid="upload-progress">
        {BATCH_LABELS.uploaded(formatBytes(sent.loaded), formatBytes(sent.total), percent)}
      </Text>
    </>
  );
}
