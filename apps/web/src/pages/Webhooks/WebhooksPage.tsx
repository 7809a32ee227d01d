/**
 * Webhooks (/webhooks, /superadmin/webhooks; ADMIN and SUPERADMIN; not a screen of the spec): register an
 * endpoint (URL, events, description) and see its signing secret once; the endpoints, each with its
 * deliveries (status, HTTP status code, attempts, next try) and a Replay button.
 */
import {
  type Screen,
  WEBHOOK_DELIVERY_STATUSES,
  WEBHOOK_EVENTS,
  type WebhookDelivery,
  type WebhookDeliveryStatus,
  type WebhookEndpoint,
  type WebhookEvent,
} from '@lendlock/contract';
import {
  Badge,
  Button,
  Checkbox,
  Code,
  Group,
  Select,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  type CreatedWebhook,
  createWebhook,
  deleteWebhook,
  listDeliveries,
  listWebhooks,
  replayDelivery,
  updateWebhook,
  webhookKeys,
} from '../../api/webhooks';
import { PageTitle } from '../../app/layout/PageTitle';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { OneTimeSecret } from '../../components/OneTimeSecret';
import { QueryTable } from '../../components/QueryTable';
import { formatLocalDateTime } from '../../lib/datetime';
import { WEBHOOK_LABELS, webhookFailureText } from './labels';

export default function WebhooksPage({ screen }: { screen: Screen }) {
  const [selected, setSelected] = useState<number | null>(null);
  return (
    <Stack gap="md">
      <PageTitle screen={screen} />
      <AddEndpointForm />
      <EndpointList selected={selected} onSelect={setSelected} />
      {selected !== null ? <Deliveries endpointId={selected} /> : null}
    </Stack>
  );
}

function AddEndpointForm() {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<WebhookEvent[]>([]);
  const [error, setError] = useState<string | null>(null);
  const [created, setCreated] = useState<CreatedWebhook | null>(null);
  const mutation = useMutation({
    mutationFn: () => createWebhook(api, { url: url.trim(), events, description: description.trim() }),
    onSuccess: (reply) => {
      setCreated(reply);
      setUrl('');
      setDescription('');
      setEvents([]);
      void queryClient.invalidateQueries({ queryKey: webhookKeys.all });
    },
    onError: (failure) => setError(webhookFailureText(failure)),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setError(null);
    setCreated(null);
    if (!url.trim()) return setError(WEBHOOK_LABELS.urlRequired);
    if (events.length === 0) return setError(WEBHOOK_LABELS.eventsRequired);
    mutation.mutate();
  };

  return (
    <Stack gap="sm">
      <form onSubmit={submit} noValidate aria-label={WEBHOOK_LABELS.addEndpoint}>
        <Stack gap="sm" maw={720}>
          <TextInput
            label={WEBHOOK_LABELS.url}
            placeholder="https://loans.example.com/lendlock-events"
            required
            autoComplete="off"
            value={url}
            onChange={(event) => setUrl(event.currentTarget.value)}
          />
          <TextInput
            label={WEBHOOK_LABELS.description}
            autoComplete="off"
            value={description}
            onChange={(event) => setDescription(event.currentTarget.value)}
          />
          <Checkbox.Group
            label={WEBHOOK_LABELS.events}
            value={events}
            onChange={(value) => setEvents(value as WebhookEvent[])}
          >
            <SimpleGrid cols={{ base: 1, sm: 2 }} spacing={4} mt={4}>
              {WEBHOOK_EVENTS.map((name) => (
                <Checkbox key={name} value={name} label={name} />
              ))}
            </SimpleGrid>
          </Checkbox.Group>
          {error ? (
            <Text c="red.8" role="alert">
              {error}
            </Text>
          ) : null}
          <Group>
            <Button type="submit" loading={mutation.isPending}>
              {WEBHOOK_LABELS.addEndpoint}
            </Button>
          </Group>
        </Stack>
      </form>
      {created ? <NewSecretNotice created={created} onDismiss={() => setCreated(null)} /> : null}
    </Stack>
  );
}

function NewSecretNotice({ created, onDismiss }: { created: CreatedWebhook; onDismiss: () => void }) {
  return (
    <OneTimeSecret
      title={WEBHOOK_LABELS.signingSecret}
      message={created.message}
      secret={created.secret}
      labels={{ copy: WEBHOOK_LABELS.copy, copied: WEBHOOK_LABELS.copied, dismiss: WEBHOOK_LABELS.dismiss }}
      onDismiss={onDismiss}
      testIds={{ notice: 'new-webhook-secret', secret: 'webhook-secret' }}
    />
  );
}

function EndpointList({
  selected,
  onSelect,
}: {
  selected: number | null;
  onSelect: (id: number | null) => void;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const endpoints = useQuery({
    queryKey: webhookKeys.list(),
    queryFn: ({ signal }) => listWebhooks(api, signal),
  });
  const toggle = useMutation({
    mutationFn: (endpoint: WebhookEndpoint) =>
      updateWebhook(api, { id: endpoint.id, enabled: !endpoint.enabled }),
    onSuccess: () => void queryClient.invalidateQueries({ queryKey: webhookKeys.all }),
    onError: (failure) => window.alert(webhookFailureText(failure)),
  });
  const remove = useMutation({
    mutationFn: (endpoint: WebhookEndpoint) => deleteWebhook(api, endpoint.id),
    onSuccess: (_reply, endpoint) => {
      if (selected === endpoint.id) onSelect(null);
      void queryClient.invalidateQueries({ queryKey: webhookKeys.all });
    },
    onError: (failure) => window.alert(webhookFailureText(failure)),
  });

  if (endpoints.isPending) return <PageLoader />;
  if (endpoints.isError)
    return (
      <Text c="red.8" role="alert">
        {webhookFailureText(endpoints.error)}
      </Text>
    );
  if (endpoints.data.length === 0) return <Text>{WEBHOOK_LABELS.noEndpoints}</Text>;
  return (
    <Table.ScrollContainer minWidth={720}>
      <Table striped verticalSpacing="xs" aria-label={WEBHOOK_LABELS.endpoints}>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{WEBHOOK_LABELS.url}</Table.Th>
            <Table.Th>{WEBHOOK_LABELS.events}</Table.Th>
            <Table.Th>{WEBHOOK_LABELS.description}</Table.Th>
            <Table.Th>{WEBHOOK_LABELS.createdBy}</Table.Th>
            <Table.Th>{WEBHOOK_LABELS.status}</Table.Th>
            <Table.Th>{WEBHOOK_LABELS.action}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {endpoints.data.map((endpoint) => (
            <Table.Tr key={endpoint.id} aria-selected={selected === endpoint.id}>
              <Table.Td style={{ wordBreak: 'break-all' }}>{endpoint.url}</Table.Td>
              <Table.Td>{endpoint.events.join(', ')}</Table.Td>
              <Table.Td>{endpoint.description}</Table.Td>
              <Table.Td>
                {endpoint.createdBy}
                <Text size="xs">{formatLocalDateTime(endpoint.createdAt)}</Text>
              </Table.Td>
              <Table.Td>
                <Badge variant="outline" color={endpoint.enabled ? 'green.9' : 'gray.8'}>
                  {endpoint.enabled ? WEBHOOK_LABELS.enabled : WEBHOOK_LABELS.disabled}
                </Badge>
              </Table.Td>
              <Table.Td>
                <Group gap="xs" wrap="nowrap">
                  <Button size="xs" variant="default" onClick={() => onSelect(endpoint.id)}>
                    {WEBHOOK_LABELS.deliveries}
                  </Button>
                  <Button
                    size="xs"
                    variant="default"
                    loading={toggle.isPending && toggle.variables?.id === endpoint.id}
                    onClick={() => toggle.mutate(endpoint)}
                  >
                    {endpoint.enabled ? WEBHOOK_LABELS.disable : WEBHOOK_LABELS.enable}
                  </Button>
                  <Button
                    size="xs"
                    color="red.8"
                    loading={remove.isPending && remove.variables?.id === endpoint.id}
                    onClick={() => {
                      if (window.confirm(WEBHOOK_LABELS.confirmDelete(endpoint.url))) remove.mutate(endpoint);
                    }}
                  >
                    {WEBHOOK_LABELS.delete}
                  </Button>
                </Group>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

const STATUS_COLOURS: Record<WebhookDeliveryStatus, string> = {
  PENDING: 'yellow.9',
  DELIVERED: 'green.9',
  FAILED: 'red.8',
};

function Deliveries({ endpointId }: { endpointId: number }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [status, setStatus] = useState<WebhookDeliveryStatus | null>(null);
  const deliveries = useQuery({
    queryKey: webhookKeys.deliveries(endpointId, status),
    queryFn: ({ signal }) => listDeliveries(api, { id: endpointId, status }, signal),
    refetchInterval: 5_000,
  });
  const replay = useMutation({
    mutationFn: (delivery: WebhookDelivery) => replayDelivery(api, delivery.id),
    onSuccess: (reply) => {
      window.alert(reply.message);
      void queryClient.invalidateQueries({ queryKey: webhookKeys.all });
    },
    onError: (failure) => window.alert(webhookFailureText(failure)),
  });

  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-end">
        <Title order={2} size="h3">
          {WEBHOOK_LABELS.deliveries}
        </Title>
        <Select
          label={WEBHOOK_LABELS.status}
          data={[
            { value: '', label: WEBHOOK_LABELS.all },
            ...WEBHOOK_DELIVERY_STATUSES.map((s) => ({ value: s, label: s })),
          ]}
          value={status ?? ''}
          onChange={(value) => setStatus((value || null) as WebhookDeliveryStatus | null)}
          allowDeselect={false}
          w={180}
        />
      </Group>
      <QueryTable
        query={deliveries}
        failureText={webhookFailureText}
        empty={WEBHOOK_LABELS.noDeliveries}
        label={WEBHOOK_LABELS.deliveries}
        minWidth={720}
        columns={[
          WEBHOOK_LABELS.event,
          WEBHOOK_LABELS.messageId,
          WEBHOOK_LABELS.status,
          WEBHOOK_LABELS.statusCode,
          WEBHOOK_LABELS.attempts,
          WEBHOOK_LABELS.nextTry,
          WEBHOOK_LABELS.createdAt,
          WEBHOOK_LABELS.action,
        ]}
        row={(delivery) => (
          <Table.Tr key={delivery.id}>
            <Table.Td>{delivery.event}</Table.Td>
            <Table.Td>
              <Code>{delivery.messageId}</Code>
            </Table.Td>
            <Table.Td>
              <Badge variant="outline" color={STATUS_COLOURS[delivery.status]}>
                {delivery.status}
              </Badge>
              {delivery.lastError ? <Text size="xs">{delivery.lastError}</Text> : null}
            </Table.Td>
            <Table.Td>{delivery.lastStatusCode ?? '—'}</Table.Td>
            <Table.Td>{delivery.attempts}</Table.Td>
            <Table.Td>{delivery.nextAttemptAt ? formatLocalDateTime(delivery.nextAttemptAt) : '—'}</Table.Td>
            <Table.Td>{formatLocalDateTime(delivery.createdAt)}</Table.Td>
            <Table.Td>
              <Button
                size="xs"
                variant="default"
                aria-label={WEBHOOK_LABELS.replayOf(delivery.messageId)}
                loading={replay.isPending && replay.variables?.id === delivery.id}
                onClick={() => replay.mutate(delivery)}
              >
                {WEBHOOK_LABELS.replay}
              </Button>
            </Table.Td>
          </Table.Tr>
        )}
      />
    </Stack>
  );
}
