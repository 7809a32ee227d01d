/**
 * Holds: the devices collections must leave alone (a dispute, a repair, a customer in hospital), with
 * who held each, when and why; hold another by IMEI, or remove a hold (after a confirmation).
 */
import { Button, Group, Stack, Table, Text, Textarea, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { collectionKeys, listHolds, putHold, removeHold } from '../../api/collections';
import { useServices } from '../../app/services';
import { QueryTable } from '../../components/QueryTable';
import { validateHoldImei, validateHoldReason } from '../../features/collections/holds';
import { collectionsFailureText, HOLD_LABELS as H } from '../../features/collections/labels';
import { formatLocalDateTime } from '../../lib/datetime';
import { COLLECTIONS_LABELS as L } from './labels';

export function HoldsTab() {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const holds = useQuery({
    queryKey: collectionKeys.holds(null),
    queryFn: ({ signal }) => listHolds(api, null, signal),
  });
  const remove = useMutation({
    mutationFn: (imei: string) => removeHold(api, imei),
    onSuccess: (reply) => {
      setMessage({ text: reply.message, error: false });
      void queryClient.invalidateQueries({ queryKey: collectionKeys.all });
    },
    onError: (failure) => setMessage({ text: collectionsFailureText(failure), error: true }),
  });

  return (
    <Stack gap="lg">
      <AddHold />
      <Stack gap="xs">
        <Title order={2} size="h3">
          {L.holdsTitle}
        </Title>
        {message ? (
          <Text c={message.error ? 'red.8' : undefined} fw={700} role={message.error ? 'alert' : 'status'}>
            {message.text}
          </Text>
        ) : null}
        <QueryTable
          query={holds}
          failureText={collectionsFailureText}
          empty={L.noHolds}
          label={L.holdsTitle}
          testId="holds"
          minWidth={720}
          columns={[H.imei, H.reason, H.heldBy, H.heldAt, H.retailer, H.action]}
          row={(hold) => (
            <Table.Tr key={hold.imei}>
              <Table.Td>{hold.imei}</Table.Td>
              <Table.Td style={{ wordBreak: 'break-word' }}>{hold.reason}</Table.Td>
              <Table.Td>{hold.heldBy}</Table.Td>
              <Table.Td>{formatLocalDateTime(hold.heldAt)}</Table.Td>
              <Table.Td>{hold.retailerPhone ?? '—'}</Table.Td>
              <Table.Td>
                <Button
                  size="xs"
                  variant="default"
                  aria-label={H.removeOf(hold.imei)}
                  loading={remove.isPending && remove.variables === hold.imei}
                  onClick={() => {
                    setMessage(null);
                    if (window.confirm(H.confirmRemove(hold.imei))) remove.mutate(hold.imei);
                  }}
                >
                  {H.remove}
                </Button>
              </Table.Td>
            </Table.Tr>
          )}
        />
      </Stack>
    </Stack>
  );
}

function AddHold() {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [imei, setImei] = useState('');
  const [reason, setReason] = useState('');
  const [errors, setErrors] = useState<{ imei?: string | null; reason?: string | null }>({});
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const hold = useMutation({
    mutationFn: () => putHold(api, { imei: imei.trim(), reason: reason.trim() }),
    onSuccess: (reply) => {
      setMessage({ text: reply.message, error: false });
      setImei('');
      setReason('');
      void queryClient.invalidateQueries({ queryKey: collectionKeys.all });
    },
    onError: (failure) => setMessage({ text: collectionsFailureText(failure), error: true }),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setMessage(null);
    const found = { imei: validateHoldImei(imei), reason: validateHoldReason(reason) };
    setErrors(found);
    if (!found.imei && !found.reason) hold.mutate();
  };
  return (
    <form onSubmit={submit} noValidate aria-label={L.addHold}>
      <Stack gap="xs" maw={720}>
        <Title order={2} size="h3">
          {L.addHold}
        </Title>
        <Group align="flex-start" grow>
          <TextInput
            label={H.imei}
            required
            inputMode="numeric"
            maxLength={15}
            value={imei}
            error={errors.imei}
            onChange={(event) => {
              setImei(event.currentTarget.value);
              setErrors((before) => ({ ...before, imei: null }));
            }}
          />
          <Textarea
            label={H.reason}
            required
            autosize
            minRows={1}
            maxLength={500}
            value={reason}
            error={errors.reason}
            onChange={(event) => {
              setReason(event.currentTarget.value);
              setErrors((before) => ({ ...before, reason: null }));
            }}
          />
        </Group>
        {message ? (
          <Text c={message.error ? 'red.8' : undefined} fw={700} role={message.error ? 'alert' : 'status'}>
            {message.text}
          </Text>
        ) : null}
        <Group>
          <Button type="submit" loading={hold.isPending}>
            {H.hold}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
