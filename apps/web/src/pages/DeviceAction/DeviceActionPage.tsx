/**
 * Device Action (/superadmin/deviceAction only): REBOOT or UPDATE to one IMEI or to ALL.
 * Typing is limited to up to 15 digits or a prefix of ALL (a refused keystroke shows why); submitting
 * checks the IMEI and the action. 'Batch Process Without File upload' sends the action to ALL enrolled
 * devices and follows each device's answer.
 */
import {
  DEVICE_ACTION_SUCCESS,
  DEVICE_ACTIONS,
  deviceActionTypingError,
  MESSAGES,
  type Screen,
  validateDeviceAction,
} from '@lendlock/contract';
import { Button, Card, Grid, Group, NativeSelect, Stack, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { commandFailureText, type DeviceActionResponse, sendDeviceAction } from '../../api/commands';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { CommandStatus } from '../../features/commands/CommandStatus';
import { AllDevicesProgress } from './AllDevicesProgress';
import { DEVICE_ACTION_LABELS } from './labels';

const ACTION_OPTIONS = [{ value: '', label: DEVICE_ACTION_LABELS.selectAction }, ...DEVICE_ACTIONS];

type Sent =
  | { kind: 'single'; transactionId: string; imei: string; action: string }
  | { kind: 'all'; batchId: number; action: string };

function useDeviceAction(onSent: (sent: Sent) => void) {
  const { api } = useServices();
  const user = useSession()?.email ?? '';
  const mutation = useMutation({
    mutationFn: (request: { imei: string; action: string }) => sendDeviceAction(api, { ...request, user }),
  });
  const send = (request: { imei: string; action: string }, onSuccess?: () => void) => {
    const all = request.imei.toUpperCase() === 'ALL';
    if (all && !window.confirm(DEVICE_ACTION_LABELS.confirmAll(request.action))) return;
    mutation.mutate(
      { imei: all ? 'ALL' : request.imei, action: request.action },
      {
        onSuccess: (reply: DeviceActionResponse) => {
          window.alert(DEVICE_ACTION_SUCCESS);
          if (reply.batchId !== undefined)
            onSent({ kind: 'all', batchId: reply.batchId, action: request.action });
          else if (reply.transactionId)
            onSent({
              kind: 'single',
              transactionId: reply.transactionId,
              imei: request.imei,
              action: request.action,
            });
          onSuccess?.();
        },
        onError: (error) => window.alert(commandFailureText(error)),
      },
    );
  };
  return { send, pending: mutation.isPending };
}

export default function DeviceActionPage({ screen }: { screen: Screen }) {
  const [sent, setSent] = useState<Sent | null>(null);
  return (
    <Stack gap="md">
      <PageTitle screen={screen} />
      <Grid gap="md">
        <Grid.Col span={{ base: 12, md: 6 }}>
          <SingleDeviceAction onSent={setSent} />
        </Grid.Col>
        <Grid.Col span={{ base: 12, md: 6 }}>
          <AllDevicesAction onSent={setSent} />
        </Grid.Col>
      </Grid>
      {sent?.kind === 'single' ? (
        <Group gap="xs">
          <Text size="sm" fw={500}>
            {DEVICE_ACTION_LABELS.liveStatus}:
          </Text>
          <CommandStatus
            key={sent.transactionId}
            transactionId={sent.transactionId}
            label={DEVICE_ACTION_LABELS.sentTo(sent.action, sent.imei)}
          />
        </Group>
      ) : null}
      {sent?.kind === 'all' ? (
        <AllDevicesProgress key={sent.batchId} batchId={sent.batchId} action={sent.action} />
      ) : null}
    </Stack>
  );
}

function SingleDeviceAction({ onSent }: { onSent: (sent: Sent) => void }) {
  const [imei, setImei] = useState('');
  const [action, setAction] = useState('');
  const [errors, setErrors] = useState<{ imei?: string | null; action?: string | null }>({});
  const { send, pending } = useDeviceAction(onSent);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const problem = validateDeviceAction({ imei, action });
    const onImei = problem === MESSAGES.deviceActionImei;
    setErrors(problem ? (onImei ? { imei: problem } : { action: problem }) : {});
    if (problem) return;
    send({ imei: imei.trim(), action }, () => setImei(''));
  };

  return (
    <Card withBorder padding="md" data-testid="device-action-single">
      <Title order={4} mb="sm">
        {DEVICE_ACTION_LABELS.single}
      </Title>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <TextInput
            label={DEVICE_ACTION_LABELS.imeiOrAll}
            placeholder={DEVICE_ACTION_LABELS.imeiOrAllPlaceholder}
            required
            autoComplete="off"
            value={imei}
            error={errors.imei}
            onChange={(event) => {
              const next = event.currentTarget.value;
              const refused = deviceActionTypingError(next);
              // The keystroke is refused and the reason shown; the value stays as it was.
              setErrors({ imei: refused });
              if (!refused) setImei(next);
            }}
          />
          <NativeSelect
            label={DEVICE_ACTION_LABELS.action}
            required
            data={ACTION_OPTIONS}
            value={action}
            error={errors.action}
            onChange={(event) => {
              setAction(event.currentTarget.value);
              setErrors((current) => ({ ...current, action: null }));
            }}
          />
          <Button type="submit" loading={pending} w="fit-content">
            {DEVICE_ACTION_LABELS.submit}
          </Button>
        </Stack>
      </form>
    </Card>
  );
}

function AllDevicesAction({ onSent }: { onSent: (sent: Sent) => void }) {
  const [action, setAction] = useState('');
  const [error, setError] = useState<string | null>(null);
  const { send, pending } = useDeviceAction(onSent);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const problem = validateDeviceAction({ imei: 'ALL', action });
    setError(problem);
    if (!problem) send({ imei: 'ALL', action });
  };

  return (
    <Card withBorder padding="md" data-testid="device-action-all">
      <Title order={4}>{DEVICE_ACTION_LABELS.batchTitle}</Title>
      <Text size="sm" c="dimmed" mb="sm">
        {DEVICE_ACTION_LABELS.batchHint}
      </Text>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <NativeSelect
            label={DEVICE_ACTION_LABELS.action}
            required
            data={ACTION_OPTIONS}
            value={action}
            error={error}
            onChange={(event) => {
              setAction(event.currentTarget.value);
              setError(null);
            }}
          />
          <Button type="submit" color="red" loading={pending} w="fit-content">
            {DEVICE_ACTION_LABELS.runOnAll}
          </Button>
        </Stack>
      </form>
    </Card>
  );
}
