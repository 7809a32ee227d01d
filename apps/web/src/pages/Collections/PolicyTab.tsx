/**
 * The policy: every field of the lender's collections policy (a SUPERADMIN edits, an ADMIN reads), a dry
 * run of the policy in the form for a chosen day, saving a new version after a confirmation that names
 * each change, and the version history (who, when, what changed).
 */
import {
  type CollectionsPolicy,
  dayProblem,
  lenderClock,
  type PolicyChange,
  policyChanges,
} from '@lendlock/contract';
import { Button, Card, Group, List, Modal, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  collectionKeys,
  fetchPolicy,
  listPolicyVersions,
  type PolicyVersion,
  savePolicy,
} from '../../api/collections';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { QueryTable } from '../../components/QueryTable';
import { collectionsFailureText } from '../../features/collections/labels';
import { formatLocalDateTime } from '../../lib/datetime';
import { COLLECTIONS_LABELS as L } from './labels';
import { PlanView } from './PlanView';
import { PolicyFields } from './PolicyFields';
import {
  changeText,
  formFromPolicy,
  type PolicyErrors,
  type PolicyFormValues,
  settingText,
  validate,
} from './policyForm';

export function PolicyTab() {
  const { api } = useServices();
  const session = useSession();
  /** The server's answer to the last save, kept here: the editor is remounted for the version it made. */
  const [saved, setSaved] = useState<{ version: number; message: string } | null>(null);
  const policy = useQuery({
    queryKey: collectionKeys.policy(),
    queryFn: ({ signal }) => fetchPolicy(api, signal),
  });
  if (policy.isPending) return <PageLoader />;
  if (policy.isError)
    return (
      <Text c="red.8" role="alert">
        {collectionsFailureText(policy.error)}
      </Text>
    );
  return (
    <Stack gap="lg">
      {/* Keyed by version: a new version (saved here or elsewhere) starts the form afresh. */}
      <PolicyEditor
        key={policy.data.version}
        current={policy.data}
        canEdit={session?.userlevel === 'SUPERADMIN'}
        savedMessage={saved?.version === policy.data.version ? saved.message : null}
        onSaved={setSaved}
      />
      <VersionHistory />
    </Stack>
  );
}

interface DryRun {
  date: string;
  /** null: the saved policy (the form is unchanged). */
  policy: CollectionsPolicy | null;
  enabled: boolean;
  id: number;
}

function PolicyEditor({
  current,
  canEdit,
  savedMessage,
  onSaved,
}: {
  current: PolicyVersion;
  canEdit: boolean;
  savedMessage: string | null;
  onSaved: (saved: { version: number; message: string }) => void;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [values, setValues] = useState<PolicyFormValues>(() => formFromPolicy(current.policy));
  const [errors, setErrors] = useState<PolicyErrors>({});
  const [notice, setNotice] = useState<{ text: string; error: boolean } | null>(null);
  const [pending, setPending] = useState<{ policy: CollectionsPolicy; changes: PolicyChange[] } | null>(null);
  const [day, setDay] = useState(() => lenderClock(current.policy.timeZone, new Date()).date);
  const [dayError, setDayError] = useState<string | null>(null);
  const [dryRun, setDryRun] = useState<DryRun | null>(null);

  const save = useMutation({
    mutationFn: (policy: CollectionsPolicy) => savePolicy(api, policy),
    onSuccess: (reply) => {
      setPending(null);
      onSaved({ version: reply.version, message: reply.message });
      const { message: _message, ...version } = reply;
      queryClient.setQueryData(collectionKeys.policy(), version);
      void queryClient.invalidateQueries({ queryKey: collectionKeys.all });
    },
  });

  const set = <K extends keyof PolicyFormValues>(field: K, value: PolicyFormValues[K]) => {
    setValues((before) => ({ ...before, [field]: value }));
    setErrors((before) => ({ ...before, [field]: undefined }));
    setNotice(null);
  };

  const checked = (): CollectionsPolicy | null => {
    const result = validate(values);
    if (!result.ok) {
      setErrors(result.errors);
      return null;
    }
    setErrors({});
    return result.policy;
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!canEdit) return;
    const policy = checked();
    if (!policy) return setNotice({ text: L.fixErrors, error: true });
    const changes = policyChanges(current.policy, policy);
    if (changes.length === 0) return setNotice({ text: L.noChanges, error: false });
    save.reset();
    setPending({ policy, changes });
  };

  const runDryRun = () => {
    const problem = dayProblem(L.dryRunDate.toLowerCase(), day);
    setDayError(problem);
    const policy = checked();
    if (!policy) return setNotice({ text: L.dryRunInvalid, error: true });
    if (problem) return;
    const unchanged = policyChanges(current.policy, policy).length === 0;
    setDryRun((before) => ({
      date: day,
      policy: unchanged ? null : policy,
      enabled: policy.enabled,
      id: (before?.id ?? 0) + 1,
    }));
  };

  return (
    <Stack gap="lg">
      <Card withBorder>
        <form onSubmit={submit} noValidate aria-label={L.currentPolicy}>
          <Stack gap="md">
            <Group justify="space-between" align="flex-start">
              <Title order={2} size="h3">
                {L.currentPolicy}
              </Title>
              <Text size="sm" data-testid="policy-version" data-version={current.version}>
                {L.changedBy(
                  current.version,
                  current.changedBy,
                  current.changedAt ? formatLocalDateTime(current.changedAt) : '',
                )}
              </Text>
            </Group>
            {savedMessage ? (
              <Text fw={700} role="status" data-testid="policy-message">
                {savedMessage}
              </Text>
            ) : null}
            {canEdit ? null : <Text size="sm">{L.readOnly}</Text>}
            <PolicyFields values={values} errors={errors} readOnly={!canEdit} onChange={set} />
            {notice ? (
              <Text c={notice.error ? 'red.8' : undefined} role={notice.error ? 'alert' : 'status'}>
                {notice.text}
              </Text>
            ) : null}
            {canEdit ? (
              <Group>
                <Button type="submit">{L.save}</Button>
                <Button
                  variant="default"
                  onClick={() => {
                    setValues(formFromPolicy(current.policy));
                    setErrors({});
                    setNotice(null);
                  }}
                >
                  {L.reset}
                </Button>
              </Group>
            ) : null}
          </Stack>
        </form>
      </Card>

      <Card withBorder>
        <Stack gap="sm">
          <Title order={2} size="h3">
            {L.dryRun}
          </Title>
          <Text size="sm">{L.dryRunText}</Text>
          <Group align="flex-end">
            <TextInput
              type="date"
              label={L.dryRunDate}
              value={day}
              error={dayError}
              onChange={(event) => {
                setDay(event.currentTarget.value);
                setDayError(null);
              }}
              w={190}
            />
            <Button onClick={runDryRun}>{L.runDryRun}</Button>
          </Group>
          {dryRun ? (
            <PlanView
              key={dryRun.id}
              date={dryRun.date}
              policy={dryRun.policy}
              policyEnabled={dryRun.enabled}
              testId="dry-run"
              level={3}
            />
          ) : null}
        </Stack>
      </Card>

      <Modal opened={pending !== null} onClose={() => setPending(null)} title={L.confirmSaveTitle}>
        {pending ? (
          <Stack gap="sm" data-testid="confirm-save">
            <Text size="sm">{L.confirmSaveText}</Text>
            <List size="sm" spacing={4}>
              {pending.changes.map((change) => (
                <List.Item key={change.field}>{changeText(change)}</List.Item>
              ))}
            </List>
            {save.isError ? (
              <Text c="red.8" size="sm" role="alert">
                {collectionsFailureText(save.error)}
              </Text>
            ) : null}
            <Group justify="flex-end" gap="sm">
              <Button variant="default" onClick={() => setPending(null)}>
                {L.cancel}
              </Button>
              <Button loading={save.isPending} onClick={() => save.mutate(pending.policy)}>
                {L.confirmSave(current.version + 1)}
              </Button>
            </Group>
          </Stack>
        ) : null}
      </Modal>
    </Stack>
  );
}

function VersionHistory() {
  const { api } = useServices();
  const versions = useQuery({
    queryKey: collectionKeys.versions(),
    queryFn: ({ signal }) => listPolicyVersions(api, signal),
  });
  return (
    <Stack gap="xs">
      <Title order={2} size="h3">
        {L.history}
      </Title>
      <QueryTable
        query={versions}
        failureText={collectionsFailureText}
        empty={L.noHistory}
        label={L.history}
        testId="policy-history"
        minWidth={720}
        columns={[L.versionCol, L.byCol, L.atCol, L.changesCol]}
        row={(version) => (
          <Table.Tr key={version.version} data-version={version.version}>
            <Table.Td>{version.version}</Table.Td>
            <Table.Td>{version.changedBy ?? '—'}</Table.Td>
            <Table.Td>{version.changedAt ? formatLocalDateTime(version.changedAt) : '—'}</Table.Td>
            <Table.Td>
              {version.version === 1 ? <Text size="sm">{L.firstVersion}</Text> : null}
              <List size="sm" spacing={2}>
                {version.changes.map((change) => (
                  <List.Item key={change.field}>
                    {version.version === 1 ? settingText(change) : changeText(change)}
                  </List.Item>
                ))}
              </List>
            </Table.Td>
          </Table.Tr>
        )}
      />
    </Stack>
  );
}
