/**
 * The devices of an uploaded IMEI list (Device Details batch, Last Command Reports): looked up in lists
 * of up to 10,000; 'No valid device data found for uploaded IMEIs.' when none is known, 'An error occurred
 * while processing the uploaded file.' when the lookup fails (spec §8).
 */
import { type DeviceRecord, MESSAGES } from '@lendlock/contract';
import { Center, Loader, Text } from '@mantine/core';
import { type UseMutationResult, useMutation } from '@tanstack/react-query';
import { fetchDevicesForImeis } from '../../api/devices';
import { useServices } from '../../app/services';
import { DeviceTable } from './DeviceTable';

export type DeviceLookup = UseMutationResult<{ items: DeviceRecord[]; message?: string }, Error, string[]>;

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
  if (lookup.data.items.length === 0) {
    return <Text data-testid="no-results">{lookup.data.message ?? MESSAGES.noValidDeviceData}</Text>;
  }
  return <DeviceTable items={lookup.data.items} />;
}
