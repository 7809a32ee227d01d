import type { ConsoleUser } from '@lendlock/contract';
import type { UserListRow } from './repository';

/** A user row as the console sees it: never the password hash. */
export function toConsoleUser(row: UserListRow): ConsoleUser {
  const ids = row.permission_ids ?? [];
  return {
    id: row.id,
    email: row.email,
    phone: row.phone,
    userlevel: row.userlevel,
    permissions: ids,
    permissions_id: ids,
    permission_names: row.permission_names ?? [],
    userstatus: row.userstatus,
    loginstatus: Number(row.live_sessions) > 0 ? 'LOGIN' : 'LOGOUT',
    retailer_phone: row.retailer_phone,
    created_at: new Date(row.created_at).toISOString(),
  };
}
