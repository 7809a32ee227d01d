/**
 * The kill switch, prominently: running (green) or stopped (red, with who stopped it, when and why).
 * Stopping asks for a reason in a confirmation dialog; only a SUPERADMIN resumes (killSwitch.ts). The
 * server's answer is shown, with the queued automated commands it cancelled.
 */
import { Badge, Button, Card, Group, Modal, Stack, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { collectionKeys, fetchKillSwitch, setKillSwitch } from '../../api/collections';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { collectionsFailureText } from '../../features/collections/labels';
import { formatLocalDateTime } from '../../lib/datetime';
import { killSwitchControls, validateReason } from './killSwitch';
import { COLLECTIONS_LABELS as L } from './labels';

export function KillSwitchCard() {
  const { api } = useServices();
  const session = useSession();
  const queryClient = useQueryClient();
  const [asking, setAsking] = useState(false);
  const [done, setDone] = useState<string | null>(null);
  const state = useQuery({
    queryKey: collectionKeys.killSwitch(),
    queryFn: ({ signal }) => fetchKillSwitch(api, signal),
    refetchInterval: 15_000,
  });
  const change = useMutation({
    mutationFn: (request: { on: boolean; reason: string }) => setKillSwitch(api, request),
    onSuccess: (reply) => {
      setAsking(false);
      setDone(
        reply.on && reply.cancelled > 0
          ? `${reply.message} ${L.cancelledQueued(reply.cancelled)}`
          : reply.message,
      );
      const { message: _message, cancelled: _cancelled, ...state } = reply;
      queryClient.setQueryData(collectionKeys.killSwitch(), state);
      // Everything collections shows depends on the switch: the plan, the runs, the queue.
      void queryClient.invalidateQueries({ queryKey: collectionKeys.all });
    },
  });

  if (state.isPending) return <PageLoader />;
  if (state.isError)
    return (
      <Text c="red.8" role="alert">
        {collectionsFailureText(state.error)}
      </Text>
    );

  const on = state.data.on;
  const controls = killSwitchControls(session, on);
  const changed =
    state.data.changedBy && state.data.changedAt ? formatLocalDateTime(state.data.changedAt) : null;

  return (
    <Card
      withBorder
      padding="md"
      data-testid="kill-switch"
      data-state={on ? 'on' : 'off'}
      style={{
        borderWidth: 2,
        borderColor: on ? 'var(--mantine-color-red-8)' : 'var(--mantine-color-green-9)',
      }}
    >
      <Group justify="space-between" align="flex-start" wrap="wrap">
        <Stack gap={4}>
          <Group gap="sm">
            <Title order={2} size="h3">
              {L.killSwitch}
            </Title>
            <Badge size="lg" color={on ? 'red.8' : 'green.9'} data-testid="kill-switch-state">
              {on ? L.stopped : L.running}
            </Badge>
          </Group>
          <Text>{on ? L.stoppedText : L.runningText}</Text>
          {on && state.data.changedBy && changed ? (
            <Text size="sm">
              {L.stoppedBy(state.data.changedBy, changed)}
              {state.data.reason ? ` ${L.reason}: ${state.data.reason}` : ''}
            </Text>
          ) : null}
          {!on && state.data.changedBy && changed ? (
            <Text size="sm">{L.resumedBy(state.data.changedBy, changed)}</Text>
          ) : null}
          {controls.note ? <Text size="sm">{controls.note}</Text> : null}
          {done ? (
            <Text size="sm" fw={700} role="status" data-testid="kill-switch-message">
              {done}
            </Text>
          ) : null}
        </Stack>
        {controls.button ? (
          <Button
            color={controls.button === 'stop' ? 'red.8' : 'green.9'}
            onClick={() => {
              setDone(null);
              change.reset();
              setAsking(true);
            }}
          >
            {controls.button === 'stop' ? L.stop : L.resume}
          </Button>
        ) : null}
      </Group>
      <Modal
        opened={asking}
        onClose={() => setAsking(false)}
        title={controls.button === 'resume' ? L.resumeTitle : L.stopTitle}
      >
        {asking ? (
          <ReasonForm
            resume={controls.button === 'resume'}
            pending={change.isPending}
            failure={change.isError ? collectionsFailureText(change.error) : null}
            onCancel={() => setAsking(false)}
            onConfirm={(reason) => change.mutate({ on: controls.button !== 'resume', reason })}
          />
        ) : null}
      </Modal>
    </Card>
  );
}

function ReasonForm({
  resume,
  pending,
  failure,
  onCancel,
  onConfirm,
}: {
  resume: boolean;
  pending: boolean;
  failure: string | null;
  onCancel: () => void;
  onConfirm: (reason: string) => void;
}) {
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const problem = validateReason(reason);
    setError(problem);
    if (!problem) onConfirm(reason.trim());
  };
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Text size="sm">{resume ? L.resumeText : L.stopText}</Text>
        <Textarea
          label={L.reason}
          required
          data-autofocus
          autosize
          minRows={2}
          maxLength={500}
          value={reason}
          error={error}
          onChange={(event) => setReason(event.currentTarget.value)}
        />
        {failure ? (
          <Text c="red.8" size="sm" role="alert">
            {failure}
          </Text>
        ) : null}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onCancel}>
            {L.cancel}
          </Button>
          <Button type="submit" color={resume ? 'green.9' : 'red.8'} loading={pending}>
            {resume ? L.confirmResume : L.confirmStop}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
