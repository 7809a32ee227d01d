/**
 * All User Details: email, phone, permissions as a hover list, login status (click → confirm →
 * forced logout, then a second question: also deactivate the user's API keys?), user status icon (click →
 * confirm → enable/disable; disabling also switches the keys off on the server) and Edit. A toggle updates
 * the row at once and then reloads the list; its errors are alerted raw. A row the viewer may
 * not manage (an ADMIN's view of ADMIN and SUPERADMIN rows) shows its statuses without any control.
 */
import { type ConsoleUser, canManage } from '@lendlock/contract';
import { ActionIcon, Badge, Button, Group, HoverCard, List, Table, Text } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { forceLogout, updateUserStatus, userQueryKeys } from '../../api/users';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { USER_LABELS } from './labels';
import { ResetMfaButton } from './ResetMfaButton';
import { StatusIcon } from './StatusIcon';
import {
  nextUserStatus,
  permissionLabel,
  toggleFailureText,
  withLoggedOut,
  withUserStatus,
} from './userForms';

export function UsersTable({ users, onEdit }: { users: ConsoleUser[]; onEdit: (user: ConsoleUser) => void }) {
  const { api } = useServices();
  const viewer = useSession();
  const queryClient = useQueryClient();

  const updateList = (change: (users: ConsoleUser[]) => ConsoleUser[]) => {
    queryClient.setQueryData<ConsoleUser[]>(userQueryKeys.list(), (current) => current && change(current));
    void queryClient.invalidateQueries({ queryKey: userQueryKeys.all });
  };

  const statusChange = useMutation({
    mutationFn: (user: ConsoleUser) =>
      updateUserStatus(api, { email: user.email, status: nextUserStatus(user.userstatus) }),
    onSuccess: (_reply, user) =>
      updateList((list) => withUserStatus(list, user.email, nextUserStatus(user.userstatus))),
    onError: (error) => window.alert(toggleFailureText(error)),
  });

  const logout = useMutation({
    mutationFn: ({ user, deactivateKeys }: { user: ConsoleUser; deactivateKeys: boolean }) =>
      forceLogout(api, user.email, { deactivateKeys }),
    onSuccess: (_reply, { user }) => updateList((list) => withLoggedOut(list, user.email)),
    onError: (error) => window.alert(toggleFailureText(error)),
  });

  const toggleStatus = (user: ConsoleUser) => {
    if (window.confirm(USER_LABELS.statusConfirm(user.email, nextUserStatus(user.userstatus)))) {
      statusChange.mutate(user);
    }
  };

  /** The spec's confirmation first; only then the offer to switch the user's keys off too. */
  const logOut = (user: ConsoleUser) => {
    if (!window.confirm(USER_LABELS.forceLogoutConfirm(user.email))) return;
    logout.mutate({ user, deactivateKeys: window.confirm(USER_LABELS.forceLogoutKeysConfirm) });
  };

  if (users.length === 0) return <Text c="dimmed">{USER_LABELS.noUsers}</Text>;

  return (
    <Table.ScrollContainer minWidth={760} maxHeight={400}>
      <Table striped highlightOnHover stickyHeader verticalSpacing="xs">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{USER_LABELS.email}</Table.Th>
            <Table.Th>{USER_LABELS.phone}</Table.Th>
            <Table.Th>{USER_LABELS.level}</Table.Th>
            <Table.Th>{USER_LABELS.permissions}</Table.Th>
            <Table.Th>{USER_LABELS.loginStatus}</Table.Th>
            <Table.Th>{USER_LABELS.userStatus}</Table.Th>
            <Table.Th>{USER_LABELS.action}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {users.map((user) => {
            const next = nextUserStatus(user.userstatus);
            // No control the server would refuse: an ADMIN manages USER rows only.
            const manages = viewer !== null && canManage(viewer, user.userlevel);
            return (
              <Table.Tr key={user.id}>
                <Table.Td>{user.email}</Table.Td>
                <Table.Td>{user.phone ?? ''}</Table.Td>
                <Table.Td>{user.userlevel}</Table.Td>
                <Table.Td>
                  <PermissionsHoverList user={user} />
                </Table.Td>
                <Table.Td>
                  {user.loginstatus === 'LOGIN' && manages ? (
                    <Button
                      size="compact-xs"
                      variant="light"
                      color="green"
                      aria-label={USER_LABELS.forceLogoutAction(user.email)}
                      loading={logout.isPending && logout.variables?.user.id === user.id}
                      onClick={() => logOut(user)}
                    >
                      {user.loginstatus}
                    </Button>
                  ) : (
                    <Badge variant="light" color={user.loginstatus === 'LOGIN' ? 'green' : 'gray'}>
                      {user.loginstatus}
                    </Badge>
                  )}
                </Table.Td>
                <Table.Td>
                  <Group gap={6} wrap="nowrap">
                    {manages ? (
                      <ActionIcon
                        variant="light"
                        color={user.userstatus === 'ACTIVE' ? 'green' : 'red'}
                        aria-label={USER_LABELS.statusAction(user.email, next)}
                        loading={statusChange.isPending && statusChange.variables?.id === user.id}
                        onClick={() => toggleStatus(user)}
                      >
                        <StatusIcon status={user.userstatus} />
                      </ActionIcon>
                    ) : null}
                    <Text size="sm">{user.userstatus}</Text>
                  </Group>
                </Table.Td>
                <Table.Td>
                  {manages ? (
                    <Group gap={6} wrap="nowrap">
                      <Button
                        size="compact-xs"
                        variant="default"
                        aria-label={USER_LABELS.editAction(user.email)}
                        onClick={() => onEdit(user)}
                      >
                        {USER_LABELS.edit}
                      </Button>
                      <ResetMfaButton user={user} />
                    </Group>
                  ) : null}
                </Table.Td>
              </Table.Tr>
            );
          })}
        </Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  );
}

function PermissionsHoverList({ user }: { user: ConsoleUser }) {
  const names = user.permission_names;
  if (names.length === 0) return <Text size="sm">{USER_LABELS.noPermissions}</Text>;
  return (
    <HoverCard shadow="md" openDelay={100} withinPortal>
      <HoverCard.Target>
        <Badge component="button" type="button" variant="light">
          {USER_LABELS.permissionCount(names.length)}
        </Badge>
      </HoverCard.Target>
      <HoverCard.Dropdown>
        <List size="sm" aria-label={USER_LABELS.permissionsOf(user.email)}>
          {names.map((name) => (
            <List.Item key={name}>{permissionLabel(name)}</List.Item>
          ))}
        </List>
      </HoverCard.Dropdown>
    </HoverCard>
  );
}
