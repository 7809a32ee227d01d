/**
 * The devices of an uploaded IMEI list (Device Details batch, Last Command Reports): looked up in lists
 * of up to 10,000; 'No valid device data found for uploaded IMEIs.' when none is known, 'An error occurred
 * while processing the uploaded file.' when the lookup fails. The IMEIs no device has are listed
 * below the devices with their reason, 'not registered' (another retailer's device reads the
 * same, so its existence is not revealed), instead of being left out.
 */
import { BATCH_NOT_FOUND_REASONS, MESSAGES } from '@lendlock/contract';
import { Center, Loader, Stack, Text, Title } from '@mantine/core';
import { type UseMutationResult, useMutation } from '@tanstack/react-query';
import { type DevicesForImeis, fetchDevicesForImeis } from '../../api/devices';
import { useServices } from '../../app/services';
import type { VirtualColumn } from '../../components/columns';
import { VirtualTable } from '../../components/VirtualTable';
import { DeviceTable } from './DeviceTable';
import { DEVICE_LABELS } from './labels';

export type DeviceLookup = UseMutationResult<DevicesForImeis, Error, string[]>;

/** Why an uploaded IMEI has no device: no device the user sees is registered with it. */
const NOT_REGISTERED = BATCH_NOT_FOUND_REASONS[0];

const NOT_FOUND_COLUMNS: VirtualColumn<string>[] = [
  { header: DEVICE_LABELS.sno, cell: (_, index) => index + 1 },
  { header: DEVICE_LABELS.imei1, cell: (imei) => imei },
  { header: DEVICE_LABELS.notFoundReason, cell: () => NOT_REGISTERED },
];

export function useDeviceLookup(): DeviceLookup {
  const { api } = useServices();
  return useMutation({ mutationFn: (imeis: string[]) => fetchDevicesForImeis(api, imeis) });
}

export function BatchDevices({ lookup }: { lookup: DeviceLookup }) {
  if (lookup.isIdle) return null;
  if (lookup.isPending) {
    return (
      <Center p="md">
        <Loader />
      </Center>
    );
  }
  if (lookup.isError || !lookup.data) return <Text c="red">{MESSAGES.uploadedFileError}</Text>;
  const { items, notFound, message } = lookup.data;
  return (
    <Stack>
      {items.length === 0 ? (
        <Text data-testid="no-results">{message ?? MESSAGES.noValidDeviceData}</Text>
      ) : (
        <DeviceTable items={items} />
      )}
      {notFound.length > 0 ? (
        <Stack gap="xs" data-testid="imeis-not-found">
          <Title order={2} size="h5">
            {DEVICE_LABELS.notFoundTitle(notFound.length)}
          </Title>
          <VirtualTable
            rows={notFound}
            columns={NOT_FOUND_COLUMNS}
            height={350}
            rowKey={(imei) => imei}
            testId="not-found-rows"
            label={DEVICE_LABELS.notFoundTitle(notFound.length)}
          />
        </Stack>
      ) : null}
    </Stack>
  );
}
