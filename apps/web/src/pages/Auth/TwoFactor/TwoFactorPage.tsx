/**
 * /twoFactor: the signed-in account's two-factor authentication. Not yet on: the QR code and the typed
 * key of a new secret, and a code from the app to turn it on; then the ten recovery codes, shown once,
 * to copy or download. Already on: says so. An account whose level requires it lands here after its
 * password and can go nowhere else until it is on (the server refuses its other calls); a USER comes
 * here from the account menu.
 */
import { MFA_MESSAGES, type Session } from '@lendlock/contract';
import {
  Alert,
  Anchor,
  Button,
  Code,
  CopyButton,
  Group,
  Image,
  List,
  Stack,
  Text,
  TextInput,
} from '@mantine/core';
import { useDocumentTitle } from '@mantine/hooks';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, type ReactNode, useState } from 'react';
import { Link, Navigate, useLocation, useNavigate } from 'react-router';
import { ApiError } from '../../../api/client';
import { confirmMfaEnrolment, getMfaStatus, mfaQueryKeys, startMfaEnrolment } from '../../../api/mfa';
import { PageLoader } from '../../../app/PageLoader';
import { useServices } from '../../../app/services';
import { useSession } from '../../../app/session/useSession';
import { downloadText } from '../../../features/csv/download';
import { MFA_LABELS } from '../../../features/mfa/labels';
import { AuthCard } from '../AuthCard';
import { readCode, recoveryCodesText } from './mfaForms';

export default function TwoFactorPage() {
  const { api, config } = useServices();
  const session = useSession();
  const location = useLocation();
  const next = (location.state as { next?: string } | null)?.next ?? '/';
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  useDocumentTitle(`${MFA_LABELS.title} · ${config.productLabel}`);
  const status = useQuery({
    queryKey: mfaQueryKeys.status(),
    queryFn: ({ signal }) => getMfaStatus(api, signal),
    enabled: session !== null,
  });

  if (session === null) return <Navigate to="/login" replace />;
  let body: ReactNode;
  if (recoveryCodes) {
    body = <RecoveryCodes codes={recoveryCodes} session={session} next={next} />;
  } else if (status.isPending) {
    body = <PageLoader />;
  } else if (status.isError) {
    body = <FailureText error={status.error} />;
  } else if (status.data.enabled) {
    body = (
      <Stack gap="sm">
        <Text>{MFA_LABELS.isOn}</Text>
        <Text size="sm">{MFA_LABELS.codesLeft(status.data.recoveryCodesLeft)}</Text>
        <Text size="sm" c="dimmed">
          {MFA_LABELS.lostPhone}
        </Text>
        <Anchor component={Link} to={next}>
          {MFA_LABELS.back}
        </Anchor>
      </Stack>
    );
  } else {
    body = (
      <Enrolment required={status.data.required} session={session} next={next} onEnabled={setRecoveryCodes} />
    );
  }
  return <AuthCard title={MFA_LABELS.title}>{body}</AuthCard>;
}

function FailureText({ error }: { error: unknown }) {
  return (
    <Text c="red" size="sm" role="alert">
      {error instanceof ApiError && error.serverMessage ? error.serverMessage : MFA_MESSAGES.notStarted}
    </Text>
  );
}

function Enrolment({
  required,
  session,
  next,
  onEnabled,
}: {
  required: boolean;
  session: Session;
  next: string;
  onEnabled: (codes: string[]) => void;
}) {
  const { api, sessions } = useServices();
  const queryClient = useQueryClient();
  const [code, setCode] = useState('');
  const [error, setError] = useState<string | null>(null);
  // One new secret per visit: never refetched behind the person's back while they scan it.
  const enrolment = useQuery({
    queryKey: mfaQueryKeys.enrolment(),
    queryFn: () => startMfaEnrolment(api),
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 0,
    retry: false,
    refetchOnWindowFocus: false,
  });
  const confirm = useMutation({
    mutationFn: (typed: string) => confirmMfaEnrolment(api, typed),
    onSuccess: async (codes) => {
      // The session may now use the console: drop the flag that kept it here.
      const { mfa_enrolment_required: _, ...unlocked } = session;
      await sessions.save(unlocked);
      queryClient.removeQueries({ queryKey: mfaQueryKeys.all });
      onEnabled(codes);
    },
    onError: (failure) =>
      setError(
        failure instanceof ApiError && failure.serverMessage
          ? failure.serverMessage
          : MFA_MESSAGES.codeInvalid,
      ),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const read = readCode(code);
    if ('error' in read) {
      setError(read.error);
      return;
    }
    setError(null);
    confirm.mutate(read.code);
  };

  if (enrolment.isPending) return <PageLoader />;
  if (enrolment.isError) return <FailureText error={enrolment.error} />;
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {required ? (
          <Alert color="yellow" data-testid="mfa-required">
            {MFA_LABELS.requiredNotice}
          </Alert>
        ) : null}
        <Text size="sm">{MFA_LABELS.scan}</Text>
        <Image src={enrolment.data.qrCode} alt={MFA_LABELS.qrAlt} w={200} h={200} mx="auto" />
        <Group gap="xs" wrap="nowrap">
          <Text size="sm" fw={500}>
            {MFA_LABELS.key}
          </Text>
          <Code data-testid="mfa-secret" fz="sm">
            {enrolment.data.secret}
          </Code>
        </Group>
        <TextInput
          label={MFA_MESSAGES.codePrompt}
          name="code"
          inputMode="numeric"
          autoComplete="one-time-code"
          maxLength={7}
          required
          value={code}
          onChange={(event) => setCode(event.currentTarget.value)}
        />
        {error ? (
          <Text c="red" size="sm" role="alert">
            {error}
          </Text>
        ) : null}
        <Button type="submit" loading={confirm.isPending} fullWidth>
          {MFA_LABELS.turnOn}
        </Button>
        {required ? (
          <Anchor component={Link} to="/logout" size="sm" c="dimmed">
            {MFA_LABELS.signOut}
          </Anchor>
        ) : (
          <Anchor component={Link} to={next} size="sm" c="dimmed">
            {MFA_LABELS.back}
          </Anchor>
        )}
      </Stack>
    </form>
  );
}

function RecoveryCodes({ codes, session, next }: { codes: string[]; session: Session; next: string }) {
  const { config } = useServices();
  const navigate = useNavigate();
  const text = recoveryCodesText(codes, session.email, config.productLabel);
  return (
    <Stack gap="sm">
      <Text c="green" role="status">
        {MFA_MESSAGES.enabled}
      </Text>
      <Text fw={600}>{MFA_LABELS.recoveryTitle}</Text>
      <Text size="sm">{MFA_LABELS.recoveryHelp}</Text>
      <List aria-label={MFA_LABELS.recoveryCodesList} data-testid="recovery-codes" ff="monospace" size="sm">
        {codes.map((code) => (
          <List.Item key={code}>{code}</List.Item>
        ))}
      </List>
      <Group gap="sm">
        <CopyButton value={codes.join('\n')} timeout={2000}>
          {({ copied, copy }) => (
            <Button variant="light" color={copied ? 'teal' : 'blue'} onClick={copy}>
              {copied ? MFA_LABELS.copied : MFA_LABELS.copy}
            </Button>
          )}
        </CopyButton>
        <Button variant="light" onClick={() => downloadText(text, MFA_LABELS.recoveryFileName, 'text/plain')}>
          {MFA_LABELS.download}
        </Button>
      </Group>
      <Button onClick={() => navigate(next, { replace: true })}>{MFA_LABELS.continue}</Button>
    </Stack>
  );
}
