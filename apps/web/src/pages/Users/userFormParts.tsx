/**
 * What the Add User and Edit User forms share: sending the form (its check first; on success the table is
 * refreshed, the modal closes and the server's message is alerted; a failure stays in the modal), the
 * level and its permissions, and the foot of the form (the error, Cancel and the submit button).
 */
import { levelsGivenBy, type UserLevel } from '@lendlock/contract';
import { Button, Group, NativeSelect, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { userQueryKeys } from '../../api/users';
import { useSession } from '../../app/session/useSession';
import { USER_LABELS } from './labels';
import { PermissionChecklist } from './PermissionChecklist';

/**
 * The level, which only a SUPERADMIN chooses (an ADMIN gives USER only, so sees no choice), and the
 * permissions of a USER; an ADMIN or SUPERADMIN account has none to grant. `from`: the level before the
 * edit, to say that changing it signs the user out.
 */
export function LevelAndPermissions({
  level,
  permissions,
  onLevel,
  onPermissions,
  from,
}: {
  level: UserLevel;
  permissions: string[];
  onLevel: (level: UserLevel) => void;
  onPermissions: (permissions: string[]) => void;
  from?: UserLevel;
}) {
  const levels = levelsGivenBy(useSession()?.userlevel);
  return (
    <>
      {levels.length > 1 ? (
        <NativeSelect
          label={USER_LABELS.level}
          data={[...levels]}
          value={level}
          onChange={(event) => onLevel(event.currentTarget.value as UserLevel)}
          {...(from !== undefined && level !== from ? { description: USER_LABELS.levelChangeSignsOut } : {})}
        />
      ) : null}
      {level === 'USER' ? (
        <PermissionChecklist value={permissions} onChange={onPermissions} />
      ) : (
        <Text size="sm" c="dimmed">
          {USER_LABELS.passesEveryPermission(level)}
        </Text>
      )}
    </>
  );
}

export function useSaveUser<R>(options: {
  send: (request: R) => Promise<{ message: string }>;
  /** Alerted when the server's answer has no message. */
  success: string;
  failureText: (failure: unknown) => string;
  onDone: () => void;
}) {
  const queryClient = useQueryClient();
  const [error, setError] = useState<string | null>(null);
  const mutation = useMutation({ mutationFn: options.send });
  /** Shows `invalid` if the form's check failed; otherwise sends `request`. */
  const save = (invalid: string | null, request: () => R | null) => {
    setError(invalid);
    const body = invalid ? null : request();
    if (body === null) return;
    mutation.mutate(body, {
      onSuccess: (reply) => {
        void queryClient.invalidateQueries({ queryKey: userQueryKeys.all });
        options.onDone();
        window.alert(reply.message || options.success);
      },
      onError: (failure) => setError(options.failureText(failure)),
    });
  };
  return { error, pending: mutation.isPending, save };
}

export function UserFormFooter({
  error,
  pending,
  submitLabel,
  onCancel,
}: {
  error: string | null;
  pending: boolean;
  submitLabel: string;
  onCancel: () => void;
}) {
  return (
    <>
      {error ? (
        <Text c="red" size="sm" role="alert">
          {error}
        </Text>
      ) : null}
      <Group justify="flex-end">
        <Button variant="default" onClick={onCancel}>
          {USER_LABELS.cancel}
        </Button>
        <Button type="submit" loading={pending}>
          {submitLabel}
        </Button>
      </Group>
    </>
  );
}
