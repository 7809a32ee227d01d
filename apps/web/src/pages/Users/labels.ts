/** Headings, column names, buttons and prompts of User Management that the spec does not word. */
import type { UserLevel, UserStatus } from '@lendlock/contract';

export const USER_LABELS = {
  addUser: 'Add User',
  editUser: 'Edit User',
  email: 'Email',
  phone: 'Phone',
  password: 'Password',
  permissions: 'Permissions',
  level: 'Level',
  loginStatus: 'Login Status',
  userStatus: 'User Status',
  action: 'Action',
  edit: 'Edit',
  save: 'Save',
  cancel: 'Cancel',
  noUsers: 'No users yet.',
  noPermissions: 'None',
  permissionCount: (count: number) => `${count} permission${count === 1 ? '' : 's'}`,
  permissionsOf: (email: string) => `Permissions of ${email}`,
  /** In place of the checkboxes for an ADMIN or SUPERADMIN account. */
  passesEveryPermission: (level: UserLevel) =>
    `An ${level} passes every permission check: there is nothing to grant.`,
  levelChangeSignsOut: 'Changing the level signs this user out: they sign in again with the new level.',
  editAction: (email: string) => `Edit ${email}`,
  forceLogoutAction: (email: string) => `Force logout ${email}`,
  statusAction: (email: string, next: UserStatus) => `${next === 'INACTIVE' ? 'Disable' : 'Enable'} ${email}`,
  forceLogoutConfirm: (email: string) =>
    `Are you sure you want to log out ${email}? Every session of this user ends now.`,
  /** Asked after the forced logout is confirmed: OK also switches the user's API keys off. */
  forceLogoutKeysConfirm: "Also deactivate this user's API keys?",
  statusConfirm: (email: string, next: UserStatus) =>
    next === 'INACTIVE'
      ? `Are you sure you want to disable ${email}? The user is signed out and cannot sign in.`
      : `Are you sure you want to enable ${email}?`,
} as const;
