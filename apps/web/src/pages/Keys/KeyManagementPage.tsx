/**
 * Key Management (/keyManagement, /superadmin/keyManagement): key name, Generate Key (which asks
 * for the password again), the new key shown once with a copy button, and the table of keys
 * (name, owner, status and why an inactive key is off, created, last used) with Activate/Deactivate. The
 * server guards it too; a refusal says so in the page.
 */
import type { ApiKey, Screen } from '@lendlock/contract';
import { Badge, Button, Group, Stack, Table, Text, TextInput } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type GeneratedKey, generateKey, keyQueryKeys, updateKeyStatus, viewKeys } from '../../api/keys';
import { PageTitle } from '../../app/layout/PageTitle';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { formatLocalDateTime } from '../../lib/datetime';
import { ConfirmPasswordModal } from './ConfirmPasswordModal';
import {
  inactiveReasonText,
  keyActionFailureText,
  keyListFailureText,
  nextKeyStatus,
  validateKeyName,
} from './keyForms';
import { KEY_LABELS } from './labels';
import { NewKeyNotice } from './NewKeyNotice';

export default function KeyManagementPage({ screen }: { screen: Screen }) {
  return (
    <Stack gap="md">
      <PageTitle screen={screen} />
      <GenerateKeyForm />
      <KeyList />
    </Stack>
  );
}

function GenerateKeyForm() {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [keyName, setKeyName] = useState('');
  const [error, setError] = useState<string | null>(null);
  /** The name waiting for the password dialog, or null while it is closed. */
  const [asking, setAsking] = useState<string | null>(null);
  const [created, setCreated] = useState<GeneratedKey | null>(null);
  const mutation = useMutation({
    mutationFn: (request: { keyName: string; password: string }) => generateKey(api, request),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const invalid = validateKeyName(keyName);
    setError(invalid);
    if (!invalid) setAsking(keyName.trim());
  };

  /** Sends the name with the password; a refusal (a wrong password) stays in the dialog. */
  const generate = (password: string, onError: (message: string) => void) => {
    if (asking === null) return;
    setCreated(null);
    mutation.mutate(
      { keyName: asking, password },
      {
        onSuccess: (key) => {
          setAsking(null);
          setCreated(key);
          setKeyName('');
          void queryClient.invalidateQueries({ queryKey: keyQueryKeys.all });
        },
        onError: (failure) => onError(keyActionFailureText(failure)),
      },
    );
  };

  return (
    <Stack gap="sm">
      <form onSubmit={submit} noValidate>
        <Group align="flex-end" gap="sm">
          <TextInput
            label={KEY_LABELS.keyName}
            required
            autoComplete="off"
            value={keyName}
            error={error}
            onChange={(event) => setKeyName(event.currentTarget.value)}
            w={320}
          />
          <Button type="submit" loading={mutation.isPending}>
            {KEY_LABELS.generateKey}
          </Button>
        </Group>
      </form>
      <ConfirmPasswordModal
        opened={asking !== null}
        pending={mutation.isPending}
        onConfirm={generate}
        onClose={() => setAsking(null)}
      />
      {created ? <NewKeyNotice created={created} onDismiss={() => setCreated(null)} /> : null}
    </Stack>
  );
}

function KeyList() {
  const { api } = useServices();
  const keys = useQuery({ queryKey: keyQueryKeys.list(), queryFn: ({ signal }) => viewKeys(api, signal) });

  if (keys.isPending) return <PageLoader />;
  if (keys.isError) {
    return (
      <Text c="red" role="alert">
        {keyListFailureText(keys.error)}
      </Text>
    );
  }
  if (keys.data.length === 0) return <Text c="dimmed">{KEY_LABELS.noKeys}</Text>;
  return <KeysTable keys={keys.data} />;
}

function KeysTable({ keys }: { keys: ApiKey[] }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const toggle = useMutation({
    mutationFn: (key: ApiKey) => updateKeyStatus(api, { keyId: key.id, status: nextKeyStatus(key.status) }),
    onSuccess: (_reply, key) => {
      queryClient.setQueryData<ApiKey[]>(keyQueryKeys.list(), (current) =>
        current?.map((row) => (row.id === key.id ? { ...row, status: nextKeyStatus(key.status) } : row)),
      );
      void queryClient.invalidateQueries({ queryKey: keyQueryKeys.all });
    },
    onError: (failure) => window.alert(keyActionFailureText(failure)),
  });

  return (
    <Table.ScrollContainer minWidth={720} maxHeight={400}>
      <Table striped highlightOnHover stickyHeader verticalSpacing="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{KEY_LABELS.keyName}</Table.Th>
            <Table.Th>{KEY_LABELS.owner}</Table.Th>
            <Table.Th>{KEY_LABELS.status}</Table.Th>
            <Table.Th>{KEY_LABELS.createdAt}</Table.Th>
            <Table.Th>{KEY_LABELS.lastUsed}</Table.Th>
            <Table.Th>{KEY_LABELS.action}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {keys.map((key) => (
            <Table.Tr key={key.id}>
              <Table.Td>{key.key_name}</Table.Td>
              <Table.Td>{key.owner_email}</Table.Td>
              <Table.Td>
                <Stack gap={2} align="flex-start">
                  <Badge variant="light" color={key.status === 'active' ? 'green' : 'gray'}>
                    {key.status}
                  </Badge>
                  <InactiveReason apiKey={key} />
                </Stack>
              </Table.Td>
              <Table.Td>{formatLocalDateTime(key.created_at)}</Table.Td>
              <Table.Td>
                {key.last_used_at ? formatLocalDateTime(key.last_used_at) : KEY_LABELS.never}
              </Table.Td>
              <Table.Td>
                <Button
                  size="compact-xs"
                  variant={key.status === 'active' ? 'outline' : 'filled'}
                  color={key.status === 'active' ? 'red' : 'green'}
                  aria-label={KEY_LABELS.statusActionOf(key.status, key.key_name)}
                  loading={toggle.isPending && toggle.variables?.id === key.id}
                  onClick={() => toggle.mutate(key)}
                >
                  {KEY_LABELS.statusAction(key.status)}
                </Button>
              </Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

/** Why an inactive key is off (and who may switch it on again); nothing for an active key. */
function InactiveReason({ apiKey }: { apiKey: ApiKey }) {
  const reason = inactiveReasonText(apiKey);
  if (reason === null) return null;
  return (
    <Text size="xs" c="dimmed" maw={260} data-testid="inactive-reason">
      {reason}
    </Text>
  );
}
