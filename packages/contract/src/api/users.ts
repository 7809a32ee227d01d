import { z } from 'zod';
import { LOGIN_STATUSES, USER_STATUSES, type UserStatus, userLevelSchema } from '../roles';
import { permissionSchema } from './auth';

/** The server's answers and refusals of User Management (beside the spec's texts in MESSAGES). */
export const USER_MESSAGES = {
  usersOnly: 'An ADMIN can manage USER accounts only.',
  levelRaise: 'Only a SUPERADMIN can give the ADMIN or SUPERADMIN level.',
  /** A permission that opens nothing for a USER (userManagement, deviceAction), named by its screen. */
  notForUser: (screen: string) => `A USER cannot be given ${screen}: that screen needs a higher level.`,
  lastSuperadmin: 'The last active SUPERADMIN cannot be disabled or logged out.',
  lastSuperadminLevel: 'The last active SUPERADMIN cannot lose that level.',
  emailReadOnly: 'The email of a user cannot be changed.',
  emailTaken: 'A user with this email already exists',
  phoneTaken: 'A user with this phone number already exists',
  notFound: 'User not found',
  statusUpdated: (status: UserStatus) => `User status updated to ${status}`,
  loggedOut: 'User logged out successfully',
  loggedOutWithKeys: (keys: number) =>
    `User logged out successfully; ${keys} API key${keys === 1 ? '' : 's'} deactivated`,
  invalidEmail: 'Enter a valid email address',
} as const;

/** A console user as `getUsers.php` lists it. */
export const consoleUserSchema = z.object({
  id: z.number().int(),
  email: z.string(),
  phone: z.string().nullable(),
  userlevel: userLevelSchema,
  /** Permission ids. */
  permissions: z.array(z.number().int()),
  /** The same ids (the spec shows them under both names). */
  permissions_id: z.array(z.number().int()),
  /** The names, for the hover list. */
  permission_names: z.array(z.string()),
  userstatus: z.enum(USER_STATUSES),
  loginstatus: z.enum(LOGIN_STATUSES),
  retailer_phone: z.string().nullable(),
  created_at: z.string(),
});
export type ConsoleUser = z.infer<typeof consoleUserSchema>;

export const getUsersResponseSchema = z.object({
  status: z.literal('success'),
  items: z.array(consoleUserSchema),
});
export const getPermissionsResponseSchema = z.object({
  status: z.literal('success'),
  permissions: z.array(permissionSchema),
});

const permissionIds = z.array(z.coerce.number().int().positive()).max(100);

export const addUserRequestSchema = z.object({
  email: z.string().trim().min(1).max(254),
  phone: z.string().trim().max(20),
  password: z.string().max(1024),
  permissions: permissionIds.default([]),
  /** Optional: USER by default; only a SUPERADMIN may create ADMIN or SUPERADMIN accounts. */
  userlevel: userLevelSchema.optional(),
  retailer_phone: z.string().trim().max(20).nullish(),
  /** Kept for compatibility with the console; the server acts as the signed-in user. */
  user: z.string().optional(),
});
export type AddUserRequest = z.infer<typeof addUserRequestSchema>;

export const updateUserRequestSchema = z.object({
  id: z.coerce.number().int().positive(),
  email: z.string().trim().min(1).max(254),
  phone: z.string().trim().max(20),
  permissions: permissionIds.default([]),
  /**
   * Optional: the level is kept without it. Only a SUPERADMIN changes a level; a change ends the user's
   * sessions, so they sign in again with the new level's screens.
   */
  userlevel: userLevelSchema.optional(),
  user: z.string().optional(),
});
export type UpdateUserRequest = z.infer<typeof updateUserRequestSchema>;

export const updateUserStatusRequestSchema = z.object({
  email: z.string().trim().min(1).max(254),
  status: z.enum(USER_STATUSES),
});

export const updateLoginStatusRequestSchema = z.object({
  email: z.string().trim().min(1).max(254),
  /** Also deactivate the user's API keys (the console asks); the spec's call, without it, keeps them. */
  deactivateKeys: z.boolean().optional(),
});
