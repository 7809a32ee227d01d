/**
 * User Management's 'Reset MFA' (not in the spec): for a user whose two-factor authentication is on, after
 * a confirmation, removes it (a lost phone); the user is signed out and sets it up again at the next
 * sign-in. The server decides who may (an ADMIN: USERs; a SUPERADMIN: anyone); a refusal is alerted raw.
 */
import type { ConsoleUser } from '@lendlock/contract';
import { Button } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { getMfaUsers, mfaQueryKeys, resetMfa } from '../../api/mfa';
import { userQueryKeys } from '../../api/users';
import { useServices } from '../../app/services';
import { MFA_LABELS } from '../../features/mfa/labels';
import { toggleFailureText } from './userForms';

export function ResetMfaButton({ user }: { user: ConsoleUser }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const enabled = useQuery({
    queryKey: mfaQueryKeys.users(),
    queryFn: ({ signal }) => getMfaUsers(api, signal),
    select: (ids) => ids.includes(user.id),
  });
  const reset = useMutation({
    mutationFn: () => resetMfa(api, user.email),
    onSuccess: (reply) => {
      void queryClient.invalidateQueries({ queryKey: mfaQueryKeys.users() });
      // The user's sessions ended: the login status changes.
      void queryClient.invalidateQueries({ queryKey: userQueryKeys.all });
      window.alert(reply.message);
    },
    onError: (error) => window.alert(toggleFailureText(error)),
  });

  if (!enabled.data) return null;
  return (
    <Button
      size="compact-xs"
      variant="light"
      color="orange"
      aria-label={MFA_LABELS.resetMfaOf(user.email)}
      loading={reset.isPending}
      onClick={() => {
        if (window.confirm(MFA_LABELS.resetMfaConfirm(user.email))) reset.mutate();
      }}
    >
      {MFA_LABELS.resetMfa}
    </Button>
  );
}
