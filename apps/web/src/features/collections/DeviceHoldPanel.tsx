/**
 * Device Details' collections hold: whether collections may act on this device, and for an
 * ADMIN or SUPERADMIN a Hold (with a reason) or Remove hold. A USER sees nothing: holds are theirs.
 */
import { Badge, Button, Card, Group, Stack, Text, Textarea, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { collectionKeys, listHolds, putHold, removeHold } from '../../api/collections';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { formatLocalDateTime } from '../../lib/datetime';
import { validateHoldReason } from './holds';
import { collectionsFailureText, HOLD_LABELS as L } from './labels';

export function DeviceHoldPanel({ imei }: { imei: string }) {
  const session = useSession();
  if (session?.userlevel !== 'ADMIN' && session?.userlevel !== 'SUPERADMIN') return null;
  return <HoldCard imei={imei} />;
}

function HoldCard({ imei }: { imei: string }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [message, setMessage] = useState<string | null>(null);
  const holds = useQuery({
    queryKey: collectionKeys.holds(imei),
    queryFn: ({ signal }) => listHolds(api, imei, signal),
  });
  const done = (reply: { message: string }) => {
    setMessage(reply.message);
    setReason('');
    void queryClient.invalidateQueries({ queryKey: collectionKeys.all });
  };
  const hold = useMutation({
    mutationFn: (text: string) => putHold(api, { imei, reason: text }),
    onSuccess: done,
    onError: (failure) => setError(collectionsFailureText(failure)),
  });
  const remove = useMutation({
    mutationFn: () => removeHold(api, imei),
    onSuccess: done,
    onError: (failure) => setError(collectionsFailureText(failure)),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setMessage(null);
    const problem = validateHoldReason(reason);
    setError(problem);
    if (!problem) hold.mutate(reason.trim());
  };

  const current = holds.data?.[0] ?? null;
  return (
    <Card withBorder h="100%" data-testid="device-hold" data-held={current ? 'yes' : 'no'}>
      <Stack gap="xs">
        <Group justify="space-between">
          <Title order={4}>{L.title}</Title>
          {holds.isSuccess ? (
            <Badge variant="outline" color={current ? 'red.8' : 'gray.8'}>
              {current ? L.held : L.notHeld}
            </Badge>
          ) : null}
        </Group>
        {holds.isError ? (
          <Text c="red.8" size="sm" role="alert">
            {collectionsFailureText(holds.error)}
          </Text>
        ) : null}
        {holds.isSuccess && current ? (
          <>
            <Text size="sm">{L.heldText}</Text>
            <Text size="sm">
              {L.reason}: {current.reason}
            </Text>
            <Text size="sm">
              {L.heldBy}: {current.heldBy}, {formatLocalDateTime(current.heldAt)}
            </Text>
            <Group>
              <Button
                variant="default"
                loading={remove.isPending}
                onClick={() => {
                  setMessage(null);
                  setError(null);
                  if (window.confirm(L.confirmRemove(imei))) remove.mutate();
                }}
              >
                {L.remove}
              </Button>
            </Group>
          </>
        ) : null}
        {holds.isSuccess && !current ? (
          <form onSubmit={submit} noValidate aria-label={L.hold}>
            <Stack gap="xs">
              <Text size="sm">{L.notHeldText}</Text>
              <Textarea
                label={L.reason}
                required
                autosize
                minRows={1}
                maxLength={500}
                value={reason}
                onChange={(event) => {
                  setReason(event.currentTarget.value);
                  setError(null);
                }}
              />
              <Group>
                <Button type="submit" loading={hold.isPending}>
                  {L.hold}
                </Button>
              </Group>
            </Stack>
          </form>
        ) : null}
        {error ? (
          <Text c="red.8" size="sm" role="alert">
            {error}
          </Text>
        ) : null}
        {message ? (
          <Text size="sm" fw={700} role="status">
            {message}
          </Text>
        ) : null}
      </Stack>
    </Card>
  );
}
