/**
 * Spec §2/§5 Edit User: the email is read-only, phone and permissions change. 'Please fill all required
 * fields.' without a user or email; success is alerted ('User updated successfully'), a failure stays in
 * the modal ('Error saving user. Please try again.' when the server gives no message).
 */
import { type ConsoleUser, MESSAGES, type UpdateUserRequest } from '@lendlock/contract';
import { Button, Group, Modal, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { updateUser, userQueryKeys } from '../../api/users';
import { useServices } from '../../app/services';
import { USER_LABELS } from './labels';
import { PermissionChecklist } from './PermissionChecklist';
import {
  type EditUserDraft,
  editDraftOf,
  editUserFailureText,
  toUpdateUserRequest,
  validateEditUser,
} from './userForms';

export function EditUserModal({ user, onClose }: { user: ConsoleUser | null; onClose: () => void }) {
  return (
    <Modal opened={user !== null} onClose={onClose} title={USER_LABELS.editUser} size="lg">
      {user ? <EditUserForm key={user.id} user={user} onDone={onClose} /> : null}
    </Modal>
  );
}

function EditUserForm({ user, onDone }: { user: ConsoleUser; onDone: () => void }) {
  const { api, config } = useServices();
  const queryClient = useQueryClient();
  const [draft, setDraft] = useState<EditUserDraft>(() => editDraftOf(user));
  const [error, setError] = useState<string | null>(null);
  const mutation = useMutation({ mutationFn: (request: UpdateUserRequest) => updateUser(api, request) });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const invalid = validateEditUser(draft, config);
    setError(invalid);
    if (invalid || draft.id === null) return;
    mutation.mutate(toUpdateUserRequest({ ...draft, id: draft.id }), {
      onSuccess: (reply) => {
        void queryClient.invalidateQueries({ queryKey: userQueryKeys.all });
        onDone();
        window.alert(reply.message || MESSAGES.userUpdated);
      },
      onError: (failure) => setError(editUserFailureText(failure)),
    });
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        <TextInput label={USER_LABELS.email} type="email" readOnly value={draft.email} />
        <TextInput
          label={USER_LABELS.phone}
          type="tel"
          inputMode="numeric"
          autoComplete="off"
          required
          data-autofocus
          value={draft.phone}
          onChange={(event) => {
            const phone = event.currentTarget.value;
            setDraft((current) => ({ ...current, phone }));
          }}
        />
        <PermissionChecklist
          value={draft.permissions}
          onChange={(permissions) => setDraft((current) => ({ ...current, permissions }))}
        />
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
            {USER_LABELS.save}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
