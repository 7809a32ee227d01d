/**
 * Spec §2 Forgot Password: the email field and 'Send Password Reset Email'. The server mails a link and
 * answers the same for every address (design.md §3.1), so the page never learns whether it exists.
 */
import { Anchor, Button, Stack, Text, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { Link } from 'react-router';
import { requestPasswordReset } from '../../../api/password';
import { useServices } from '../../../app/services';
import { LABELS } from '../../../lib/labels';
import { AuthCard } from '../AuthCard';
import { forgotPasswordFailureText, validateForgotPassword } from './forgotPassword';

type Outcome = { kind: 'sent' | 'error'; text: string };

export default function ForgotPasswordPage() {
  const { api } = useServices();
  const [email, setEmail] = useState('');
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [submitting, setSubmitting] = useState(false);

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const invalid = validateForgotPassword(email);
    setOutcome(invalid ? { kind: 'error', text: invalid } : null);
    if (invalid) return;
    setSubmitting(true);
    try {
      const reply = await requestPasswordReset(api, email.trim());
      setOutcome({ kind: 'sent', text: reply.message });
    } catch (failure) {
      setOutcome({ kind: 'error', text: forgotPasswordFailureText(failure) });
    } finally {
      setSubmitting(false);
    }
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
          {outcome ? (
            <Text
              c={outcome.kind === 'sent' ? 'green' : 'red'}
              size="sm"
              role={outcome.kind === 'sent' ? 'status' : 'alert'}
            >
              {outcome.text}
            </Text>
          ) : null}
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
