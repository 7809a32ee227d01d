/**
 * Forgot Password: the email field and 'Send Password Reset Email'. The server mails a link and
 * answers the same for every address, so the page never learns whether it exists.
 */
import { Anchor, Button, Stack, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { requestPasswordReset } from '../../../api/password';
import { useServices } from '../../../app/services';
import { LABELS } from '../../../lib/labels';
import { AuthCard } from '../AuthCard';
import { OutcomeText, useAuthForm } from '../authForm';
import { forgotPasswordFailureText, validateForgotPassword } from './forgotPassword';

export default function ForgotPasswordPage() {
  const { api } = useServices();
  const [email, setEmail] = useState('');
  const { outcome, submitting, run } = useAuthForm({
    validate: () => validateForgotPassword(email),
    send: () => requestPasswordReset(api, email.trim()),
    failureText: forgotPasswordFailureText,
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void run();
  };

  return (
    <AuthCard title={LABELS.forgotPasswordTitle}>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <TextInput
            label={LABELS.email}
            name="email"
            type="email"
            autoComplete="email"
            required
            value={email}
            onChange={(event) => setEmail(event.currentTarget.value)}
          />
          <OutcomeText outcome={outcome} />
          <Button type="submit" loading={submitting} fullWidth>
            {LABELS.sendResetEmail}
          </Button>
          <Anchor component={Link} to="/login" size="sm">
            {LABELS.backToLogin}
          </Anchor>
        </Stack>
      </form>
    </AuthCard>
  );
}
