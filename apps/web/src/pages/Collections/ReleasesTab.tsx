/**
 * Release approvals: the releases collections queued at a loan's last instalment while the policy says
 * "after an operator approves"; Approve sends the RELEASE through the one command pipeline, Reject keeps
 * the device in the lender's control. Each asks for a confirmation first. Decided ones are listed too.
 */

import type { ReleaseRequest } from '@lendlock/contract';
import { Badge, Button, Group, NativeSelect, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import {
  collectionKeys,
  decideRelease,
  fetchPolicy,
  listReleases,
  type ReleaseState,
} from '../../api/collections';
import { useServices } from '../../app/services';
import { QueryTable } from '../../components/QueryTable';
import { collectionsFailureText } from '../../features/collections/labels';
import { formatLocalDateTime } from '../../lib/datetime';
import { COLLECTIONS_LABELS as L } from './labels';

const STATE_OPTIONS = (Object.keys(L.states) as ReleaseState[]).map((value) => ({
  value,
  label: L.states[value],
}));
const STATE_COLOURS = {
  AWAITING_APPROVAL: 'yellow.9',
  APPROVED: 'green.9',
  REJECTED: 'gray.8',
  REFUSED: 'red.9',
} as const satisfies Record<ReleaseState, string>;

type Decision = 'approve' | 'reject';
const DECISIONS = {
  approve: { colour: { color: 'green.9' }, label: L.approve, of: L.approveOf, confirm: L.confirmApprove },
  reject: { colour: { variant: 'default' }, label: L.reject, of: L.rejectOf, confirm: L.confirmReject },
} as const;

export function ReleasesTab() {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [state, setState] = useState<ReleaseState>('AWAITING_APPROVAL');
  const [message, setMessage] = useState<{ text: string; error: boolean } | null>(null);
  const policy = useQuery({
    queryKey: collectionKeys.policy(),
    queryFn: ({ signal }) => fetchPolicy(api, signal),
  });
  const releases = useQuery({
    queryKey: collectionKeys.releases(state),
    queryFn: ({ signal }) => listReleases(api, state, signal),
    refetchInterval: 30_000,
  });
  const decide = useMutation({
    mutationFn: (request: { id: number; decision: Decision }) => decideRelease(api, request),
    onSuccess: (reply) => {
      setMessage({ text: reply.message, error: false });
      void queryClient.invalidateQueries({ queryKey: collectionKeys.all });
    },
    onError: (failure) => setMessage({ text: collectionsFailureText(failure), error: true }),
  });

  /** Approve or Reject, each after its confirmation; the one being sent shows it is loading. */
  const decisionButton = (release: ReleaseRequest, decision: Decision) => {
    const { colour, label, of, confirm } = DECISIONS[decision];
    return (
      <Button
        size="xs"
        {...colour}
        aria-label={of(release.imei)}
        loading={
          decide.isPending && decide.variables?.id === release.id && decide.variables.decision === decision
        }
        onClick={() => {
          if (window.confirm(confirm(release.imei, release.customerName)))
            decide.mutate({ id: release.id, decision });
        }}
      >
        {label}
      </Button>
    );
  };

  const mode = policy.data?.policy.release;
  return (
    <Stack gap="sm">
      <Group justify="space-between" align="flex-end">
        <Title order={2} size="h3">
          {L.releasesTitle}
        </Title>
        <NativeSelect
          label={L.state}
          data={STATE_OPTIONS}
          value={state}
          onChange={(event) => setState(event.currentTarget.value as ReleaseState)}
          w={220}
        />
      </Group>
      {mode ? (
        <Text size="sm" data-testid="release-mode">
          {L.releaseMode(L.releaseOptions[mode].toLowerCase())}
          {mode === 'APPROVAL' ? '' : ` ${L.releaseModeNote}`}
        </Text>
      ) : null}
      {message ? (
        <Text c={message.error ? 'red.8' : undefined} fw={700} role={message.error ? 'alert' : 'status'}>
          {message.text}
        </Text>
      ) : null}
      <QueryTable
        query={releases}
        failureText={collectionsFailureText}
        empty={L.noReleases}
        label={L.releasesTitle}
        testId="release-queue"
        minWidth={820}
        columns={[L.imei, L.customer, L.loan, L.retailer, L.paidAt, L.queuedAt, L.state, L.action]}
        row={(release) => (
          <Table.Tr key={release.id}>
            <Table.Td>{release.imei}</Table.Td>
            <Table.Td>{release.customerName}</Table.Td>
            <Table.Td>{release.loanRef}</Table.Td>
            <Table.Td>{release.retailerPhone ?? '—'}</Table.Td>
            <Table.Td>{release.paidAt ? formatLocalDateTime(release.paidAt) : '—'}</Table.Td>
            <Table.Td>{formatLocalDateTime(release.queuedAt)}</Table.Td>
            <Table.Td>
              <Badge variant="outline" color={STATE_COLOURS[release.state]}>
                {L.states[release.state]}
              </Badge>
            </Table.Td>
            <Table.Td>
              {release.state === 'AWAITING_APPROVAL' ? (
                <Group gap="xs" wrap="nowrap">
                  {decisionButton(release, 'approve')}
                  {decisionButton(release, 'reject')}
                </Group>
              ) : (
                <Text size="sm">
                  {release.decidedBy ?? '—'}
                  {release.decidedAt ? ` ${formatLocalDateTime(release.decidedAt)}` : ''}
                </Text>
              )}
            </Table.Td>
          </Table.Tr>
        )}
      />
    </Stack>
  );
}
