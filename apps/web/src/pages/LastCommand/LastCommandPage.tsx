/**
 * Last Command Reports (SUPERADMIN): a CSV of IMEIs (the batch CSV rules), then each
 * known device with its last command, and View Audit per row.
 */
import type { Screen } from '@lendlock/contract';
import { Card, Stack } from '@mantine/core';
import { PageTitle } from '../../app/layout/PageTitle';
import { ImeiCsvUpload } from '../../features/csv/ImeiCsvUpload';
import { BatchDevices, useDeviceLookup } from '../../features/devices/BatchDevices';
import { DEVICE_LABELS } from '../../features/devices/labels';

export default function LastCommandPage({ screen }: { screen: Screen }) {
  const lookup = useDeviceLookup();
  return (
    <Stack>
      <PageTitle screen={screen} />
      <Card withBorder maw={640}>
        <ImeiCsvUpload
          label={DEVICE_LABELS.uploadImeis}
          onReset={() => lookup.reset()}
          onValid={(imeis) => lookup.mutate(imeis)}
        />
      </Card>
      <BatchDevices lookup={lookup} />
    </Stack>
  );
}
