/**
 * Device Details: a single IMEI search that fires at exactly 15 characters and clears the results
 * otherwise, and a batch CSV upload (the batch CSV rules) looked up in lists; both show the device table with
 * View Audit. A single device also shows its current state, its pending commands, its identity (device
 * key and re-registration requests) and its loan (features/loans/LoanPanel.tsx).
 */
import { MESSAGES, type Screen } from '@lendlock/contract';
import { Card, Center, Grid, Loader, Stack, Text, TextInput, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { deviceKeys, fetchDeviceDetails } from '../../../api/devices';
import { PageTitle } from '../../../app/layout/PageTitle';
import { useServices } from '../../../app/services';
import { DeviceFailuresPanel } from '../../../features/collections/DeviceFailuresPanel';
import { DeviceHoldPanel } from '../../../features/collections/DeviceHoldPanel';
import { ImeiCsvUpload } from '../../../features/csv/ImeiCsvUpload';
import { BatchDevices, useDeviceLookup } from '../../../features/devices/BatchDevices';
import { DeviceTable } from '../../../features/devices/DeviceTable';
import { needsImeiHint, searchableImei } from '../../../features/devices/imeiSearch';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { LoanPanel } from '../../../features/loans/LoanPanel';
import { DeviceIdentityPanel } from './DeviceIdentityPanel';
import { DeviceStatePanel } from './DeviceStatePanel';
import { PendingCommandsPanel } from './PendingCommandsPanel';

type Mode = 'none' | 'single' | 'batch';

export default function DeviceDetailsPage({ screen }: { screen: Screen }) {
  const [typed, setTyped] = useState('');
  const [mode, setMode] = useState<Mode>('none');
  const batch = useDeviceLookup();
  const imei = searchableImei(typed);

  return (
    <Stack>
      <PageTitle screen={screen} />
      <Grid>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Card withBorder h="100%">
            <Title order={4} mb="sm">
              {L.searchTitle}
            </Title>
            <TextInput
              label={L.searchLabel}
              placeholder={MESSAGES.imeiHint}
              inputMode="numeric"
              maxLength={15}
              value={typed}
              error={needsImeiHint(typed) ? MESSAGES.imeiHint : undefined}
              onChange={(event) => {
                setTyped(event.currentTarget.value);
                setMode('single');
                batch.reset();
              }}
            />
          </Card>
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <Card withBorder h="100%">
            <Title order={4} mb="sm">
              {L.batchTitle}
            </Title>
            <ImeiCsvUpload
              onReset={() => {
                batch.reset();
                setMode('batch');
                setTyped('');
              }}
              onValid={(imeis) => batch.mutate(imeis)}
            />
          </Card>
        </Grid.Col>
      </Grid>
      {mode === 'single' && imei ? <SingleDevice imei={imei} /> : null}
      {mode === 'batch' ? <BatchDevices lookup={batch} /> : null}
    </Stack>
  );
}

function SingleDevice({ imei }: { imei: string }) {
  const { api } = useServices();
  const details = useQuery({
    queryKey: deviceKeys.details(imei),
    queryFn: ({ signal }) => fetchDeviceDetails(api, imei, { signal }),
  });
  if (details.isPending) return <Waiting />;
  if (details.isError) return <Text c="red">{MESSAGES.cannotFetch}</Text>;
  const [device] = details.data.items;
  if (!device) return <Text data-testid="no-results">{details.data.message ?? MESSAGES.noResults}</Text>;
  return (
    <Stack>
      <DeviceTable items={details.data.items} />
      <Grid>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <DeviceStatePanel device={device} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <PendingCommandsPanel imei={device.imei1} />
        </Grid.Col>
        <Grid.Col span={12}>
          <DeviceIdentityPanel imei={device.imei1} />
        </Grid.Col>
      </Grid>
      <LoanPanel imei={device.imei1} />
      <DeviceHoldPanel imei={device.imei1} />
      <DeviceFailuresPanel imei={device.imei1} />
    </Stack>
  );
}

function Waiting() {
  return (
    <Center p="md">
      <Loader />
    </Center>
  );
}
