import type { UserLevel } from '@lendlock/contract';

export interface TestUser {
  email: string;
  phone: string;
  level: UserLevel;
  permissions: string[];
}

/** Every test account signs in with this password. */
export const PASSWORD = 'Secret#123-lendlock';

/** Accounts created once in the template database (globalSetup) and so present in every test server. */
export const USERS = {
  superadmin: { email: 'root@lendlock.com', phone: '9000000010', level: 'SUPERADMIN', permissions: [] },
  admin: { email: 'admin@lendlock.com', phone: '9000000011', level: 'ADMIN', permissions: [] },
  locker: {
    email: 'locker@lendlock.com',
    phone: '9000000012',
    level: 'USER',
    permissions: ['lockDevice', 'reports'],
  },
  viewer: { email: 'viewer@lendlock.com', phone: '9000000013', level: 'USER', permissions: ['reports'] },
} as const satisfies Record<string, TestUser>;
