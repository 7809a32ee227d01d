/**
 * The permission checkboxes of the Add and Edit modals (server-defined id and permission_name),
 * for a USER: each named by its screen as the menu names it, without those that open nothing for a USER.
 * The value sent stays the server's id.
 */
import { MESSAGES } from '@lendlock/contract';
import { Checkbox, Loader, SimpleGrid, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { getPermissions, userQueryKeys } from '../../api/users';
import { useServices } from '../../app/services';
import { USER_LABELS } from './labels';
import { offeredPermissions, permissionLabel } from './userForms';

export function PermissionChecklist({
  value,
  onChange,
}: {
  /** Checked ids as strings (Checkbox.Group's values). */
  value: string[];
  onChange: (value: string[]) => void;
}) {
  const { api } = useServices();
  const permissions = useQuery({
    queryKey: userQueryKeys.permissions(),
    queryFn: ({ signal }) => getPermissions(api, signal),
    staleTime: 5 * 60_000,
  });

  if (permissions.isPending) return <Loader size="sm" aria-label={USER_LABELS.permissions} />;
  if (permissions.isError) {
    return (
      <Text c="red" size="sm" role="alert">
        {MESSAGES.cannotFetch}
      </Text>
    );
  }
  return (
    <Checkbox.Group label={USER_LABELS.permissions} value={value} onChange={onChange}>
      <SimpleGrid cols={{ base: 1, xs: 2 }} spacing="xs" mt="xs">
        {offeredPermissions(permissions.data).map((permission) => (
          <Checkbox
            key={permission.id}
            value={String(permission.id)}
            label={permissionLabel(permission.permission_name)}
          />
        ))}
      </SimpleGrid>
    </Checkbox.Group>
  );
}
