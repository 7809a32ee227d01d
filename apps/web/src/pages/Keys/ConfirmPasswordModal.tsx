/**
 * The Generate Key dialog: the signed-in user types the password again, so a session left
 * open or stolen cannot mint a key that outlives it. The server's refusal (a wrong password, or too many
 * of them) stays in the dialog; nothing is generated until the password is right.
 */
import { Button, Group, Modal, PasswordInput, Stack, Text } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { validateKeyPassword } from './keyForms';
import { KEY_LABELS } from './labels';

export function ConfirmPasswordModal({
  opened,
  pending,
  onConfirm,
  onClose,
}: {
  opened: boolean;
  pending: boolean;
  /** Sends the password; `onError` shows the server's refusal in the dialog. */
  onConfirm: (password: string, onError: (message: string) => void) => void;
  onClose: () => void;
}) {
  return (
    <Modal opened={opened} onClose={onClose} title={KEY_LABELS.confirmPassword}>
      {/* Mounted only while open: the password never outlives the dialog. */}
      {opened ? <PasswordForm pending={pending} onConfirm={onConfirm} onCancel={onClose} /> : null}
    </Modal>
  );
}

function PasswordForm({
  pending,
  onConfirm,
  onCancel,
}: {
  pending: boolean;
  onConfirm: (password: string, onError: (message: string) => void) => void;
  onCancel: () => void;
}) {
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const invalid = validateKeyPassword(password);
    setError(invalid);
    if (!invalid) onConfirm(password, setError);
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <Text size="sm">{KEY_LABELS.confirmPasswordHint}</Text>
        <PasswordInput
          label={KEY_LABELS.password}
          autoComplete="current-password"
          required
          data-autofocus
          value={password}
          onChange={(event) => setPassword(event.currentTarget.value)}
        />
        {error ? (
          <Text c="red" size="sm" role="alert">
            {error}
          </Text>
        ) : null}
        <Group justify="flex-end" gap="sm">
          <Button variant="default" onClick={onCancel}>
            {KEY_LABELS.cancel}
          </Button>
          <Button type="submit" loading={pending}>
            {KEY_LABELS.generateKey}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
