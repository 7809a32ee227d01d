/**
 * Reset Your Password at /resetPassword/{token} (the token comes from the mailed link, never from
 * the server's answer): new and confirm password. On success it says so and goes to /login after 3 s.
 */
import { Anchor, Button, PasswordInput, Stack } from '@mantine/core';
import { type FormEvent, useEffect, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { resetPassword } from '../../../api/password';
import { useServices } from '../../../app/services';
import { LABELS } from '../../../lib/labels';
import { AuthCard } from '../AuthCard';
import { OutcomeText, useAuthForm } from '../authForm';
import { RESET_REDIRECT_MS, resetPasswordFailureText, validateResetPassword } from './resetPassword';

export default function ResetPasswordPage() {
  const { api, config } = useServices();
  const { token } = useParams();
  const navigate = useNavigate();
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const { outcome, submitting, run } = useAuthForm({
    validate: () => validateResetPassword({ token, password, confirm }, config.passwordMinLength),
    send: () => resetPassword(api, { token: (token ?? '').trim(), newPassword: password }),
    failureText: resetPasswordFailureText,
  });
  const done = outcome?.ok === true;

  useEffect(() => {
    if (!done) return;
    const timer = window.setTimeout(() => navigate('/login', { replace: true }), RESET_REDIRECT_MS);
    return () => window.clearTimeout(timer);
  }, [done, navigate]);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (!done) void run();
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
          <OutcomeText outcome={outcome} />
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
