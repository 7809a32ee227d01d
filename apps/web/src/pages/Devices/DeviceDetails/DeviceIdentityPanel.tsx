/**
 * The device's identity on Device Details: the device key it enrolled and where an attestation said the
 * key lives, the verdict on that attestation (each failed check when it failed), and the registrations of its IMEI that were refused for want of proof by that key
 * (re-registration requests). An ADMIN or SUPERADMIN approves a pending one (the device may then register
 * once within the server's window) or rejects it, each after a confirmation; the server's answer is
 * alerted as-is.
 */
import {
  type DeviceIdentity,
  MESSAGES,
  type ReregistrationRequest,
  type UserLevel,
} from '@lendlock/contract';
import { Badge, Button, Card, Center, Group, List, Loader, Stack, Table, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError } from '../../../api/client';
import {
  decideReregistration,
  deviceKeys,
  fetchDeviceIdentity,
  type ReregistrationDecision,
} from '../../../api/devices';
import { useServices } from '../../../app/services';
import { useSession } from '../../../app/session/useSession';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { formatLocalDateTime } from '../../../lib/datetime';

/** Who may approve or reject a request: ADMIN and SUPERADMIN (the server refuses a USER). */
export function canDecideRegistrations(level: UserLevel | undefined): boolean {
  return level === 'ADMIN' || level === 'SUPERADMIN';
}

/** 'Device key: attested (StrongBox)', 'Device key: not attested' or 'No device key (…)'. */
export function keyLine(identity: Pick<DeviceIdentity, 'hasKey' | 'keySecurityLevel'>): string {
  if (!identity.hasKey) return L.keyNone;
  return identity.keySecurityLevel ? L.keyAttested(identity.keySecurityLevel) : L.keyNotAttested;
}

export interface DecisionSteps {
  confirm: (question: string) => boolean;
  alert: (message: string) => void;
  decide: (id: number, decision: ReregistrationDecision) => Promise<{ message: string }>;
  /** Fetches the device's identity again. */
  refetch: () => Promise<unknown>;
}

/**
 * What Approve and Reject do: ask for confirmation (nothing is sent when it is declined), send the
 * decision, alert the server's message (its own message on a refusal, e.g. a request decided meanwhile),
 * then fetch the identity again. Resolves false when the operator declined.
 */
export async function confirmAndDecide(
  imei: string,
  request: Pick<ReregistrationRequest, 'id'>,
  decision: ReregistrationDecision,
  steps: DecisionSteps,
): Promise<boolean> {
  const question = decision === 'approve' ? L.confirmApprove(imei) : L.confirmReject(imei);
  if (!steps.confirm(question)) return false;
  try {
    steps.alert((await steps.decide(request.id, decision)).message);
  } catch (error) {
    steps.alert(
      error instanceof ApiError && error.serverMessage ? error.serverMessage : MESSAGES.cannotFetch,
    );
  }
  await steps.refetch();
  return true;
}

export function DeviceIdentityPanel({ imei }: { imei: string }) {
  return (
    <Card withBorder data-testid="device-identity">
      <Title order={4} mb="xs">
        {L.identityTitle}
      </Title>
      <DeviceIdentityBody imei={imei} />
    </Card>
  );
}

function DeviceIdentityBody({ imei }: { imei: string }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const canDecide = canDecideRegistrations(useSession()?.userlevel);
  const identity = useQuery({
    queryKey: deviceKeys.identity(imei),
    queryFn: ({ signal }) => fetchDeviceIdentity(api, imei, { signal }),
  });
  const decide = useMutation({
    mutationFn: (asked: { request: ReregistrationRequest; decision: ReregistrationDecision }) =>
      confirmAndDecide(asked.request.imei1, asked.request, asked.decision, {
        confirm: (question) => window.confirm(question),
        alert: (message) => window.alert(message),
        decide: (id, decision) => decideReregistration(api, id, decision),
        refetch: () => queryClient.invalidateQueries({ queryKey: deviceKeys.identity(imei) }),
      }),
  });

  if (identity.isPending) {
    return (
      <Center>
        <Loader size="sm" />
      </Center>
    );
  }
  if (identity.isError) {
    const { error } = identity;
    return (
      <Text c="red">
        {error instanceof ApiError && error.serverMessage ? error.serverMessage : MESSAGES.cannotFetch}
      </Text>
    );
  }
  const { data } = identity;
  return (
    <Stack gap="xs">
      <Text data-testid="identity-key">{keyLine(data)}</Text>
      {data.keyEnrolledAt ? (
        <Text size="sm" data-testid="identity-key-enrolled">
          {L.keyEnrolledAt(formatLocalDateTime(data.keyEnrolledAt))}
        </Text>
      ) : null}
      {data.attestation ? <AttestationVerdict verdict={data.attestation} /> : null}
      {data.requests.length === 0 ? (
        <Text size="sm" data-testid="identity-no-requests">
          {L.requestsNone}
        </Text>
      ) : (
        <>
          <Title order={5} mt="xs">
            {L.requestsTitle}
          </Title>
          <Table.ScrollContainer minWidth={760}>
            <Table withTableBorder aria-label={L.requestsTitle} data-testid="registration-requests">
              <Table.Thead>
                <Table.Tr>
                  <Table.Th>{L.requestedAt}</Table.Th>
                  <Table.Th>{L.requestAddress}</Table.Th>
                  <Table.Th>{L.requestClaims}</Table.Th>
                  <Table.Th>{L.requestNewKey}</Table.Th>
                  <Table.Th>{L.requestAttempts}</Table.Th>
                  <Table.Th>{L.status}</Table.Th>
                  {canDecide ? <Table.Th>{L.requestDecision}</Table.Th> : null}
                </Table.Tr>
              </Table.Thead>
              <Table.Tbody>
                {data.requests.map((request) => (
                  <RequestRow
                    key={request.id}
                    request={request}
                    canDecide={canDecide}
                    deciding={decide.isPending ? (decide.variables ?? null) : null}
                    onDecide={(decision) => decide.mutate({ request, decision })}
                  />
                ))}
              </Table.Tbody>
            </Table>
          </Table.ScrollContainer>
        </>
      )}
    </Stack>
  );
}

/** The attestation's verdict: passed, or failed with one line per failed check. */
function AttestationVerdict({ verdict }: { verdict: NonNullable<DeviceIdentity['attestation']> }) {
  const when = formatLocalDateTime(verdict.checkedAt);
  if (verdict.passed) {
    return (
      <Text size="sm" data-testid="identity-attestation">
        {L.attestationPassed(when)}
      </Text>
    );
  }
  return (
    <div>
      <Text size="sm" c="red.9" data-testid="identity-attestation">
        {L.attestationFailed(when)}
      </Text>
      <List size="sm" data-testid="identity-attestation-reasons">
        {verdict.reasons.map((reason) => (
          <List.Item key={reason}>{reason}</List.Item>
        ))}
      </List>
    </div>
  );
}

const STATUS_COLORS: Record<ReregistrationRequest['status'], string> = {
  PENDING: 'orange',
  APPROVED: 'teal',
  REJECTED: 'red',
  USED: 'gray',
};

/** A claimed profile's text field, or null when it is missing or empty. */
const claimed = (profile: Record<string, unknown>, field: string): string | null => {
  const value = profile[field];
  return typeof value === 'string' && value.trim() !== '' ? value : null;
};

function RequestRow(props: {
  request: ReregistrationRequest;
  canDecide: boolean;
  deciding: { request: ReregistrationRequest; decision: ReregistrationDecision } | null;
  onDecide: (decision: ReregistrationDecision) => void;
}) {
  const { request, deciding } = props;
  const when = formatLocalDateTime(request.createdAt);
  const device = [
    claimed(request.profile, 'brand') ?? claimed(request.profile, 'manufacturer'),
    claimed(request.profile, 'model'),
  ]
    .filter((part) => part !== null)
    .join(' ');
  const imei2 = claimed(request.profile, 'imei2');
  const retailer = claimed(request.profile, 'retailer_phone');
  const decidedBy =
    request.decidedBy && request.decidedAt
      ? L.decidedBy(request.decidedBy, formatLocalDateTime(request.decidedAt))
      : null;
  const busy = deciding !== null;
  return (
    <Table.Tr data-testid={`registration-request-${request.id}`}>
      <Table.Td>
        <Text size="sm">{when}</Text>
        {request.attempts > 1 ? (
          <Text size="xs">{L.lastAttemptAt(formatLocalDateTime(request.lastAttemptAt))}</Text>
        ) : null}
      </Table.Td>
      <Table.Td>{request.address ?? '—'}</Table.Td>
      <Table.Td>
        <Stack gap={0}>
          {device ? <Text size="sm">{device}</Text> : null}
          {imei2 ? <Text size="xs">{L.claimImei2(imei2)}</Text> : null}
          {retailer ? <Text size="xs">{L.claimRetailer(retailer)}</Text> : null}
        </Stack>
      </Table.Td>
      <Table.Td>{request.newKey ? L.yes : L.no}</Table.Td>
      <Table.Td>{request.attempts}</Table.Td>
      <Table.Td>
        <Badge variant="dot" color={STATUS_COLORS[request.status]} data-testid="request-status">
          {request.status}
        </Badge>
        {decidedBy ? <Text size="xs">{decidedBy}</Text> : null}
        {request.status === 'APPROVED' && request.approvedUntil ? (
          <Text size="xs">{L.approvedUntil(formatLocalDateTime(request.approvedUntil))}</Text>
        ) : null}
        {request.usedAt ? <Text size="xs">{L.usedAt(formatLocalDateTime(request.usedAt))}</Text> : null}
      </Table.Td>
      {props.canDecide ? (
        <Table.Td>
          {request.status === 'PENDING' ? (
            <Group gap="xs" wrap="nowrap">
              <Button
                size="compact-xs"
                variant="outline"
                color="teal.9"
                aria-label={L.approveRequestOf(when)}
                disabled={busy}
                loading={deciding?.request.id === request.id && deciding.decision === 'approve'}
                onClick={() => props.onDecide('approve')}
              >
                {L.approve}
              </Button>
              <Button
                size="compact-xs"
                variant="outline"
                color="red.9"
                aria-label={L.rejectRequestOf(when)}
                disabled={busy}
                loading={deciding?.request.id === request.id && deciding.decision === 'reject'}
                onClick={() => props.onDecide('reject')}
              >
                {L.reject}
              </Button>
            </Group>
          ) : null}
        </Table.Td>
      ) : null}
    </Table.Tr>
  );
}
