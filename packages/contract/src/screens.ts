/**
 * The console's screens (spec §2): one row per route name under `/` (and again under `/superadmin/`).
 * The route table, the sidebars, the route guards and the seeded permission list all read this table.
 */
import type { UserLevel } from './roles';

/**
 * How the console guards a screen (spec §6):
 * - `signedIn`: any signed-in user (Home, Logout; keyManagement, which the spec leaves unguarded and
 *   the server guards, see design.md §3.4);
 * - `permission`: ADMIN and SUPERADMIN pass, others need the permission named after the screen,
 *   otherwise the unauthorised page;
 * - `admin`: userlevel ADMIN, otherwise /login (userManagement under `/`);
 * - `superadminOnly`: exists only under `/superadmin/` (deviceAction).
 * Every screen under `/superadmin/` additionally needs userlevel SUPERADMIN, otherwise /login.
 */
export type ScreenGuard = 'signedIn' | 'permission' | 'admin' | 'superadminOnly';

export interface Screen {
  /** Route name, also the permission name where the screen has one. */
  readonly name: string;
  /** Sidebar label. */
  readonly label: string;
  /** Page title. */
  readonly title: string;
  readonly guard: ScreenGuard;
  /** Seeded as a permission (every screen of spec §2 except home and logout). */
  readonly permission: boolean;
}

const s = (
  name: string,
  label: string,
  title: string,
  guard: ScreenGuard = 'permission',
  permission = name !== 'home' && name !== 'logout',
): Screen => ({ name, label, title, guard, permission });

export const SCREENS = [
  s('home', 'Dashboard', 'Dashboard', 'signedIn'),
  s('lockDevice', 'Lock Device', 'Lock Device: Single / Batch Upload'),
  s('blockApp', 'Block App', 'Block App: Single / Batch Upload'),
  s('unblockapp', 'Unblock App', 'Unblock App: Single / Batch Upload'),
  s('unlockDevice', 'Unlock Device', 'Unlock Device: Single / Batch Upload'),
  s('disableApp', 'Disable App', 'Disable App: Single / Batch Upload'),
  s('restoreApp', 'Restore App', 'Restore App: Single / Batch Upload'),
  s('setWallpaper', 'Set Wallpaper', 'IMEI Set Wallpaper: Batch Upload'),
  s('removeWallpaper', 'Remove Wallpaper', 'Remove Wallpaper: Single / Batch Upload'),
  s('activateAlarm', 'Activate Alarm', 'Activate Alarm: Single / Batch Upload'),
  s('deactivateAlarm', 'Deactivate Alarm', 'Deactivate Alarm: Single / Batch Upload'),
  s('releaseDevice', 'Release Device', 'Release Device: Single / Batch Upload'),
  s('deviceDetails', 'Device Details', 'Device Details'),
  s('enableNotification', 'Enable Notification', 'Enable Notification: Single / Batch Upload'),
  s('enableCamera', 'Enable Camera', 'Enable Camera: Single / Batch Upload'),
  s('disableCamera', 'Disable Camera', 'Disable Camera: Single / Batch Upload'),
  s('enableCredit', 'Enable Credit', 'Enable Credit: Single / Batch Upload'),
  s('revokeCredit', 'Revoke Credit', 'Revoke Credit: Single / Batch Upload'),
  s('userManagement', 'User Management', 'All User Details', 'admin'),
  s('reports', 'Reports', 'Reports / Bulk Upload History Details'),
  s('gradeDisableApp', 'Graded Disable App', 'Graded Disable App: Single / Batch Upload'),
  s('batch', 'Set Wallpaper Batch', 'IMEI Set Wallpaper: Batch Upload'),
  s('appversion', 'App Version', 'Device Version Detail'),
  s('lastCommand', 'Last Command', 'Last Command Reports'),
  s('formattedDevice', 'Formatted Device', 'De-enroll formatted device'),
  s('auditReport', 'Audit Report', 'Audit Report By IMEI'),
  s('keyManagement', 'Key Management', 'Key Management', 'signedIn'),
  s('deviceAction', 'Device Action', 'Device Action', 'superadminOnly'),
  // Not a screen of the spec: the SUPERADMIN's search of the append-only audit log (issue 9).
  s('auditLog', 'Audit Log', 'Audit Log', 'superadminOnly', false),
  // Not a screen of the spec: webhook endpoints and their deliveries, for ADMIN and SUPERADMIN.
  s('webhooks', 'Webhooks', 'Webhooks', 'admin', false),
  s('logout', 'Logout', 'Logout', 'signedIn'),
] as const satisfies readonly Screen[];

export type ScreenName = (typeof SCREENS)[number]['name'];

const byName = new Map<string, Screen>(SCREENS.map((screen) => [screen.name, screen]));

export function screenByName(name: string): Screen | undefined {
  return byName.get(name);
}

/** The permission list seeded by a migration: one per screen name other than home and logout. */
export const PERMISSION_NAMES: readonly string[] = SCREENS.filter((screen) => screen.permission).map(
  (screen) => screen.name,
);

/**
 * The left sidebar per role, in order (spec §2). Lock, unlock, block and unblock sit beside Release
 * Device, and Revoke Credit beside Enable Credit; SUPERADMIN has no Enable Credit entry but gains
 * Device Action and Last Command, and always sees User Management.
 */
const SIDEBAR_USER: readonly ScreenName[] = [
  'home',
  'enableNotification',
  'setWallpaper',
  'removeWallpaper',
  'activateAlarm',
  'deactivateAlarm',
  'gradeDisableApp',
  'disableApp',
  'restoreApp',
  'disableCamera',
  'enableCamera',
  'releaseDevice',
  'lockDevice',
  'unlockDevice',
  'blockApp',
  'unblockapp',
  'deviceDetails',
  'formattedDevice',
  'enableCredit',
  'revokeCredit',
  'userManagement',
  'reports',
  'appversion',
  'auditReport',
  'webhooks',
  'logout',
];

const SIDEBAR_SUPERADMIN: readonly ScreenName[] = [
  'home',
  'enableNotification',
  'setWallpaper',
  'removeWallpaper',
  'activateAlarm',
  'deactivateAlarm',
  'gradeDisableApp',
  'disableApp',
  'restoreApp',
  'disableCamera',
  'enableCamera',
  'releaseDevice',
  'lockDevice',
  'unlockDevice',
  'blockApp',
  'unblockapp',
  'deviceDetails',
  'formattedDevice',
  'revokeCredit',
  'deviceAction',
  'lastCommand',
  'userManagement',
  'reports',
  'appversion',
  'auditReport',
  'auditLog',
  'webhooks',
  'logout',
];

export const SUPERADMIN_PREFIX = '/superadmin';

/** The path of a screen for a role: `/lockDevice` or `/superadmin/lockDevice`; home is `/` or `/superadmin`. */
export function screenPath(name: ScreenName, superadmin: boolean): string {
  const base = superadmin ? SUPERADMIN_PREFIX : '';
  return name === 'home' ? base || '/' : `${base}/${name}`;
}

/** Sidebar entries (paths) for a signed-in user level. */
export function sidebarFor(level: UserLevel | string | undefined): { name: ScreenName; path: string }[] {
  if (level === 'SUPERADMIN') {
    return SIDEBAR_SUPERADMIN.map((name) => ({ name, path: screenPath(name, true) }));
  }
  return SIDEBAR_USER.filter(
    (name) => (name !== 'userManagement' && name !== 'webhooks') || level === 'ADMIN',
  ).map((name) => ({
    name,
    path: screenPath(name, false),
  }));
}
