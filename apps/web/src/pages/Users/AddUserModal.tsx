/**
 * Spec §2/§5 Add User: email, phone, password and permission checkboxes (sent as numbers). The pure
 * validate() runs first; success is alerted ('User Added successfully') and refreshes the table, a
 * failure stays in the modal with the spec §8 text.
 */
import { type AddUserRequest, MESSAGES } from '@lendlock/contract';
import { Button, Group, Modal, PasswordInput, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { addUser, userQueryKeys } from '../../api/users';
import { useServices } from '../../app/services';
import { USER_LABELS } from './labels';
import { PermissionChecklist } from './PermissionChecklist';
import {
  type AddUserDraft,
  addUserFailureText,
  EMPTY_ADD_USER,
  toAddUserRequest,
  validateAddUser,
} from './userForms';

export function AddUserModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  return (
    <Modal opened={opened} onClose={onClose} title={USER_LABELS.addUser} size="lg">
      {/* Mounted only while open, so every opening starts from an empty form. */}
      {opened ? <AddUserForm onDone={onClose} /> : null}
    </Modal>
  );
}

function AddUserForm({ onDone }: { onDone: () => void }) {
  const { api, config } = useServices();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<AddUserDraft>(EMPTY_ADD_USER);
  const [error, setError] = useState<string | null>(null);
  const mutation = useMutation({ mutationFn: (request: AddUserRequest) => addUser(api, request) });
  const set = (patch: Partial<AddUserDraft>) => setDraft((current) => ({ ...current, ...patch }));

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const invalid = validateAddUser(draft, config);
    setError(invalid);
    if (invalid) return;
    mutation.mutate(toAddUserRequest(draft), {
      onSuccess: (reply) => {
        void queryClient.invalidateQueries({ queryKey: userQueryKeys.all });
        onDone();
        window.alert(reply.message || MESSAGES.userAdded);
      },
      onError: (failure) => setError(addUserFailureText(failure)),
    });
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput
          label={USER_LABELS.email}
          type="email"
          autoComplete="off"
          required
          data-autofocus
          value={draft.email}
          onChange={(event) => set({ email: event.currentTarget.value })}
        />
        <TextInput
          label={USER_LABELS.phone}
          type="tel"
          inputMode="numeric"
          autoComplete="off"
          required
          value={draft.phone}
          onChange={(event) => set({ phone: event.currentTarget.value })}
        />
        <PasswordInput
          label={USER_LABELS.password}
          autoComplete="new-password"
          required
          value={draft.password}
          onChange={(event) => set({ password: event.currentTarget.value })}
        />
        <PermissionChecklist value={draft.permissions} onChange={(permissions) => set({ permissions })} />
        {error ? (
          <Text c="red" size="sm" role="alert">
            {error}
          </Text>
        ) : null}
        <Group justify="flex-end">
          <Button variant="default" onClick={onDone}>
            {USER_LABELS.cancel}
          </Button>
          <Button type="submit" loading={mutation.isPending}>
            {USER_LABELS.addUser}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
