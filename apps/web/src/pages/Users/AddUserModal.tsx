/**
 * Add User: email, phone, password and permission checkboxes (sent as numbers); a SUPERADMIN
 * also chooses the level. The pure validate() runs first; success is alerted ('User Added
 * successfully') and refreshes the table, a failure stays in the modal with its text (userForms.ts).
 */
import { type AddUserRequest, MESSAGES } from '@lendlock/contract';
import { Modal, PasswordInput, Stack, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { addUser } from '../../api/users';
import { useServices } from '../../app/services';
import { USER_LABELS } from './labels';
import { LevelAndPermissions, UserFormFooter, useSaveUser } from './userFormParts';
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
  const [draft, setDraft] = useState<AddUserDraft>(EMPTY_ADD_USER);
  const { error, pending, save } = useSaveUser({
    send: (request: AddUserRequest) => addUser(api, request),
    success: MESSAGES.userAdded,
    failureText: addUserFailureText,
    onDone,
  });
  const set = (patch: Partial<AddUserDraft>) => setDraft((current) => ({ ...current, ...patch }));

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save(validateAddUser(draft, config), () => toAddUserRequest(draft));
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
        <LevelAndPermissions
          level={draft.userlevel}
          permissions={draft.permissions}
          onLevel={(userlevel) => set({ userlevel })}
          onPermissions={(permissions) => set({ permissions })}
        />
        <UserFormFooter error={error} pending={pending} submitLabel={USER_LABELS.addUser} onCancel={onDone} />
      </Stack>
    </form>
  );
}
