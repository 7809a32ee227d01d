/**
 * The second sign-in step of an account with two-factor authentication on: 'Enter the 6-digit code',
 * or one recovery code instead. The token login.php gave is exchanged for the session; when it has
 * expired (or was used), the person starts again from the password.
 */
import { MESSAGES, MFA_MESSAGES, type Session } from '@lendlock/contract';
import { Anchor, Button, Stack, Text, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { ApiError } from '../../../api/client';
import { verifyMfa } from '../../../api/mfa';
import { useServices } from '../../../app/services';
import { MFA_LABELS } from '../../../features/mfa/labels';
import { LABELS } from '../../../lib/labels';
import { readCode, readRecoveryCode } from './mfaForms';

export function MfaStep({
  mfaToken,
  onSession,
  onRestart,
}: {
  mfaToken: string;
  onSession: (session: Session) => Promise<void>;
  /** Back to the password (the token expired or was used). */
  onRestart: (message?: string) => void;
}) {
  const { api } = useServices();
  const [mode, setMode] = useState<'code' | 'recovery'>('code');
  const [value, setValue] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [submitting, setSubmitting] = useState(false);

  const switchMode = () => {
    setMode(mode === 'code' ? 'recovery' : 'code');
    setValue('');
    setError(null);
  };

  const submit = async (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const read = mode === 'code' ? readCode(value) : readRecoveryCode(value);
    if ('error' in read) {
      setError(read.error);
      return;
    }
    setError(null);
    setSubmitting(true);
    try {
      await onSession(await verifyMfa(api, { mfaToken, ...read }));
    } catch (failure) {
      if (failure instanceof ApiError && failure.code === 'MFA_CHALLENGE_EXPIRED') {
        onRestart(failure.serverMessage);
        return;
      }
      setValue('');
      setError(
        failure instanceof ApiError && failure.serverMessage
          ? failure.serverMessage
          : MESSAGES.loginNetworkFailure,
      );
    } finally {
      setSubmitting(false);
    }
  };

  const label = mode === 'code' ? MFA_MESSAGES.codePrompt : MFA_MESSAGES.recoveryPrompt;
  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          key={mode}
          label={label}
          name={mode === 'code' ? 'code' : 'recoveryCode'}
          {...(mode === 'code'
            ? { inputMode: 'numeric' as const, autoComplete: 'one-time-code', maxLength: 7 }
            : { autoComplete: 'off' })}
          data-autofocus
          required
          value={value}
          onChange={(event) => setValue(event.currentTarget.value)}
        />
        {error ? (
          <Text c="red" size="sm" role="alert">
            {error}
          </Text>
        ) : null}
        <Button type="submit" loading={submitting} fullWidth>
          {MFA_LABELS.verify}
        </Button>
        <Anchor component="button" type="button" size="sm" onClick={switchMode}>
          {mode === 'code' ? MFA_MESSAGES.useRecoveryCode : MFA_MESSAGES.useCode}
        </Anchor>
        <Anchor component="button" type="button" size="sm" c="dimmed" onClick={() => onRestart()}>
          {LABELS.backToLogin}
        </Anchor>
      </Stack>
    </form>
  );
}
