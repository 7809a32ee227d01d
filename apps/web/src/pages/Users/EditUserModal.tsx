/**
 * Edit User: the email is read-only, phone and permissions change, and a SUPERADMIN may change
 * the level (the user is then signed out). 'Please fill all required fields.' without a user
 * or email; success is alerted ('User updated successfully'), a failure stays in the modal ('Error saving
 * user. Please try again.' when the server gives no message).
 */
import { type ConsoleUser, MESSAGES, type UpdateUserRequest } from '@lendlock/contract';
import { Modal, Stack, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { updateUser } from '../../api/users';
import { useServices } from '../../app/services';
import { USER_LABELS } from './labels';
import { LevelAndPermissions, UserFormFooter, useSaveUser } from './userFormParts';
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
  const [draft, setDraft] = useState<EditUserDraft>(() => editDraftOf(user));
  const { error, pending, save } = useSaveUser({
    send: (request: UpdateUserRequest) => updateUser(api, request),
    success: MESSAGES.userUpdated,
    failureText: editUserFailureText,
    onDone,
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save(validateEditUser(draft, config), () =>
      draft.id === null ? null : toUpdateUserRequest({ ...draft, id: draft.id }, user.userlevel),
    );
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
        <LevelAndPermissions
          level={draft.userlevel}
          from={user.userlevel}
          permissions={draft.permissions}
          onLevel={(userlevel) => setDraft((current) => ({ ...current, userlevel }))}
          onPermissions={(permissions) => setDraft((current) => ({ ...current, permissions }))}
        />
        <UserFormFooter error={error} pending={pending} submitLabel={USER_LABELS.save} onCancel={onDone} />
      </Stack>
    </form>
  );
}
