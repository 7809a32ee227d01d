/**
 * Login, for `/login` and `/superadmin/login`: clears any stored session on load, validates
 * the form, and on success stores the session and goes home. Failures alert the server's message
 * as-is, a network failure 'Please try after sometime'. An account with two-factor authentication on
 * then gets the second step ('Enter the 6-digit code'); one that must set it up goes to /twoFactor.
 * After a session ended under its user (a forced logout, a disable, the expiry…) it says why, and names
 * the command that was not sent: no silent exits.
 */
import {
  MESSAGES,
  type Session,
  SUPERADMIN_PREFIX,
  sessionEndedMessage,
  validateLoginForm,
} from '@lendlock/contract';
import { Alert, Anchor, Button, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { type FormEvent, useEffect, useState, useSyncExternalStore } from 'react';
import { Link, useNavigate } from 'react-router';
import { type LoginClient, login, logout } from '../../../api/auth';
import { ApiError } from '../../../api/client';
import { useServices } from '../../../app/services';
import { LABELS } from '../../../lib/labels';
import { AuthCard } from '../AuthCard';
import { MfaStep } from '../TwoFactor/MfaStep';
import { TWO_FACTOR_PATH } from '../TwoFactor/paths';

export default function LoginPage({ client }: { client: LoginClient }) {
  const { api, config, sessions } = useServices();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [submitting, setSubmitting] = useState(false);
  /** The second step's token, once the password was right for an account with two-factor on. */
  const [mfaToken, setMfaToken] = useState<string | null>(null);
  /** Why the last session ended under its user, until the next sign-in. */
  const ended = useSyncExternalStore(sessions.subscribe, sessions.ended);

  useEffect(() => {
    // A session left behind is also ended on the server, so its token stops working.
    const stale = sessions.get();
    sessions.clear();
    if (stale) logout(api, { token: stale.token }).catch(() => undefined);
  }, [api, sessions]);

  const home = client === 'superadmin' ? SUPERADMIN_PREFIX : '/';
  const signedIn = async (session: Session) => {
    await sessions.save(session);
    // An account that must set up two-factor authentication can do nothing else first.
    if (session.mfa_enrolment_required) navigate(TWO_FACTOR_PATH, { replace: true, state: { next: home } });
    else navigate(home, { replace: true });
  };

  const restart = (message?: string) => {
    setMfaToken(null);
    setPassword('');
    setError(message ?? null);
  };

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = { email: email.trim(), password };
    const invalid = validateLoginForm(form);
    setError(invalid);
    if (invalid) return;
    setSubmitting(true);
    try {
      const answer = await login(api, form, client);
      if (answer.status === 'mfa_required') setMfaToken(answer.mfaToken);
      else await signedIn(answer);
    } catch (failure) {
      window.alert(
        failure instanceof ApiError && failure.serverMessage
          ? failure.serverMessage
          : MESSAGES.loginNetworkFailure,
      );
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <AuthCard
      title={config.productLabel}
      {...(client === 'superadmin' ? { subtitle: LABELS.superadminLogin } : {})}
    >
      {ended && !mfaToken ? (
        <Alert color="yellow" role="status" data-testid="session-ended">
          <Stack gap={4}>
            <Text size="sm">{sessionEndedMessage(ended.reason)}</Text>
            {ended.notSent ? (
              <Text size="sm" fw={600} data-testid="not-sent">
                {MESSAGES.notSent(ended.notSent)}
              </Text>
            ) : null}
          </Stack>
        </Alert>
      ) : null}
      {mfaToken ? <MfaStep mfaToken={mfaToken} onSession={signedIn} onRestart={restart} /> : null}
      <form onSubmit={submit} noValidate hidden={mfaToken !== null}>
        <Stack gap="sm">
          <TextInput
            label={LABELS.loginIdentifier}
            name="email"
            autoComplete="username"
            required
            value={email}
            onChange={(event) => setEmail(event.currentTarget.value)}
          />
          <PasswordInput
            label={LABELS.password}
            name="password"
            autoComplete="current-password"
            required
            value={password}
            onChange={(event) => setPassword(event.currentTarget.value)}
          />
          {error ? (
            <Text c="red" size="sm" role="alert">
              {error}
            </Text>
          ) : null}
          <Button type="submit" loading={submitting} fullWidth>
            {LABELS.login}
          </Button>
          <Anchor component={Link} to="/forgotPassword" size="sm">
            {LABELS.forgotPasswordLink}
          </Anchor>
        </Stack>
      </form>
    </AuthCard>
  );
}
