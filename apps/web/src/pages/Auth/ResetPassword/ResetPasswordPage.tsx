/**
 * Spec §2 Reset Your Password at /resetPassword/{token} (the token comes from the mailed link,
 * design.md §3.1): new and confirm password. On success it says so and goes to /login after 3 s.
 */
import { Anchor, Button, PasswordInput, Stack, Text } from '@mantine/core';
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { resetPassword } from '../../../api/password';
import { useServices } from '../../../app/services';
import { LABELS } from '../../../lib/labels';
import { AuthCard } from '../AuthCard';
import { RESET_REDIRECT_MS, resetPasswordFailureText, validateResetPassword } from './resetPassword';

type Outcome = { kind: 'done' | 'error'; text: string };

export default function ResetPasswordPage() {
  const { api, config } = useServices();
  const { token } = useParams();
  const navigate = useNavigate();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const done = outcome?.kind === 'done';

  useEffect(() => {
    if (!done) return;
    const timer = window.setTimeout(() => navigate('/login', { replace: true }), RESET_REDIRECT_MS);
    return () => window.clearTimeout(timer);
  }, [done, navigate]);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (done) return;
    const invalid = validateResetPassword({ token, password, confirm }, config.passwordMinLength);
    setOutcome(invalid ? { kind: 'error', text: invalid } : null);
    if (invalid || !token) return;
    setSubmitting(true);
    try {
      const reply = await resetPassword(api, { token: token.trim(), newPassword: password });
      setOutcome({ kind: 'done', text: reply.message });
    } catch (failure) {
      setOutcome({ kind: 'error', text: resetPasswordFailureText(failure) });
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <AuthCard title={LABELS.resetPasswordTitle}>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <PasswordInput
            label={LABELS.newPassword}
            name="newPassword"
            autoComplete="new-password"
            required
            disabled={done}
            value={password}
            onChange={(event) => setPassword(event.currentTarget.value)}
          />
          <PasswordInput
            label={LABELS.confirmPassword}
            name="confirmPassword"
            autoComplete="new-password"
            required
            disabled={done}
            value={confirm}
            onChange={(event) => setConfirm(event.currentTarget.value)}
          />
          {outcome ? (
            <Text
              c={outcome.kind === 'done' ? 'green' : 'red'}
              size="sm"
              role={outcome.kind === 'done' ? 'status' : 'alert'}
            >
              {outcome.text}
            </Text>
          ) : null}
          <Button type="submit" loading={submitting} disabled={done} fullWidth>
            {LABELS.resetPassword}
          </Button>
          <Anchor component={Link} to="/login" size="sm">
            {LABELS.backToLogin}
          </Anchor>
        </Stack>
      </form>
    </AuthCard>
  );
}
