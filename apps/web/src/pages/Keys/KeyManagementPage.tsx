/**
 * Spec §2 Key Management (/keyManagement, /superadmin/keyManagement): key name, Generate Key, the new
 * key shown once with a copy button, and the table of keys (name, owner, status, created, last used)
 * with Activate/Deactivate. The server guards it (design.md §3.4); a refusal says so in the page.
 */
import type { ApiKey, Screen } from '@lendlock/contract';
import { Badge, Button, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { type GeneratedKey, generateKey, keyQueryKeys, updateKeyStatus, viewKeys } from '../../api/keys';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { formatLocalDateTime } from '../../lib/datetime';
import { keyActionFailureText, keyListFailureText, nextKeyStatus, validateKeyName } from './keyForms';
import { KEY_LABELS } from './labels';
import { NewKeyNotice } from './NewKeyNotice';

export default function KeyManagementPage({ screen }: { screen: Screen }) {
  return (
    <Stack gap="md">
      <Title order={2}>{screen.title}</Title>
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
  const [created, setCreated] = useState<GeneratedKey | null>(null);
  const mutation = useMutation({ mutationFn: (name: string) => generateKey(api, name) });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const invalid = validateKeyName(keyName);
    setError(invalid);
    if (invalid) return;
    setCreated(null);
    mutation.mutate(keyName.trim(), {
      onSuccess: (key) => {
        setCreated(key);
        setKeyName('');
        void queryClient.invalidateQueries({ queryKey: keyQueryKeys.all });
      },
      onError: (failure) => setError(keyActionFailureText(failure)),
    });
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
                <Badge variant="light" color={key.status === 'active' ? 'green' : 'gray'}>
                  {key.status}
                </Badge>
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
