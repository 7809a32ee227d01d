/**
 * User Management ('All User Details'), at /userManagement (ADMIN) and
 * /superadmin/userManagement (SUPERADMIN): the users table, the Add User and Edit User modals.
 */
import { type ConsoleUser, MESSAGES, type Screen } from '@lendlock/contract';
import { Button, Group, Stack, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { getUsers, userQueryKeys } from '../../api/users';
import { PageTitle } from '../../app/layout/PageTitle';
import { PageLoader } from '../../app/PageLoader';
import { useServices } from '../../app/services';
import { AddUserModal } from './AddUserModal';
import { EditUserModal } from './EditUserModal';
import { USER_LABELS } from './labels';
import { UsersTable } from './UsersTable';

export default function UserManagementPage({ screen }: { screen: Screen }) {
  const [adding, setAdding] = useState(false);
  const [editing, setEditing] = useState<ConsoleUser | null>(null);

  return (
    <Stack gap="md">
      <Group justify="space-between">
        <PageTitle screen={screen} />
        <Button onClick={() => setAdding(true)}>{USER_LABELS.addUser}</Button>
      </Group>
      <UserList onEdit={setEditing} />
      <AddUserModal opened={adding} onClose={() => setAdding(false)} />
      <EditUserModal user={editing} onClose={() => setEditing(null)} />
    </Stack>
  );
}

function UserList({ onEdit }: { onEdit: (user: ConsoleUser) => void }) {
  const { api } = useServices();
  const users = useQuery({ queryKey: userQueryKeys.list(), queryFn: ({ signal }) => getUsers(api, signal) });

  if (users.isPending) return <PageLoader />;
  if (users.isError) {
    return (
      <Text c="red" role="alert">
        {MESSAGES.cannotFetch}
      </Text>
    );
  }
  return <UsersTable users={users.data} onEdit={onEdit} />;
}
