/**
 * The console's screens: one row per route name under `/` (and again under `/superadmin/`).
 * The route table, the sidebars, the route guards and the seeded permission list all read this table.
 */
import type { UserLevel } from './roles';

/**
 * How the console guards a screen:
 * - `signedIn`: any signed-in user (Home, Logout; keyManagement, which the spec leaves unguarded and
 *   the server guards: ADMIN, SUPERADMIN or the `keyManagement` permission);
 * - `permission`: ADMIN and SUPERADMIN pass, others need the screen's `grant` (the permission named
 *   after the screen, or the one it shares), otherwise the unauthorised page;
 * - `admin`: userlevel ADMIN (userManagement under `/`);
 * - `superadminOnly`: exists only under `/superadmin/` (deviceAction);
 * - `anyBatch`: ADMIN and SUPERADMIN pass, others need the permission of any screen that runs a batch
 *   (`BATCH_SCREENS`), otherwise the unauthorised page (Batches, not a screen of the spec).
 * Every screen under `/superadmin/` additionally needs userlevel SUPERADMIN. Where the spec sends a
 * signed-in user who fails `admin` or the SUPERADMIN check to /login, the console shows the unauthorised
 * page instead: /login ends the session, and a guard never signs anyone out.
 */
export type ScreenGuard = 'signedIn' | 'permission' | 'admin' | 'superadminOnly' | 'anyBatch';

export interface Screen {
  /** Route name, also the permission name where the screen has one. */
  readonly name: string;
  /** Sidebar label. */
  readonly label: string;
  /** Page title. */
  readonly title: string;
  readonly guard: ScreenGuard;
  /**
   * Seeded as a permission (every screen of the spec except home and logout; batch shares
   * setWallpaper's).
   */
  readonly permission: boolean;
  /**
   * The permission that opens the screen for a USER: its own name, or the screen whose grant it shares
   * (batch, the Set Wallpaper batch route, opens with setWallpaper: one screen, one grant).
   */
  readonly grant: string;
}

const s = (
  name: string,
  label: string,
  title: string,
  guard: ScreenGuard = 'permission',
  permission = name !== 'home' && name !== 'logout',
  grant = name,
): Screen => ({ name, label, title, guard, permission, grant });

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
  // The spec's second Set Wallpaper route: the same screen, opened by the same grant (migration 0026).
  s('batch', 'Set Wallpaper Batch', 'IMEI Set Wallpaper: Batch Upload', 'permission', false, 'setWallpaper'),
  s('appversion', 'App Version', 'Device Version Detail'),
  s('lastCommand', 'Last Command', 'Last Command Reports'),
  s('formattedDevice', 'Formatted Device', 'De-enroll formatted device'),
  s('auditReport', 'Audit Report', 'Audit Report By IMEI'),
  s('keyManagement', 'Key Management', 'Key Management', 'signedIn'),
  s('deviceAction', 'Device Action', 'Device Action', 'superadminOnly'),
  // Not a screen of the spec: the SUPERADMIN's search of the append-only audit log.
  s('auditLog', 'Audit Log', 'Audit Log', 'superadminOnly', false),
  // Not a screen of the spec: webhook endpoints and their deliveries, for ADMIN and SUPERADMIN.
  s('webhooks', 'Webhooks', 'Webhooks', 'admin', false),
  // Not a screen of the spec: every batch the user may see, and its results.
  s('batches', 'Batches', 'Batches', 'anyBatch', false),
  // Not a screen of the spec: collections on autopilot, for ADMIN and SUPERADMIN.
  s('collections', 'Collections', 'Collections', 'admin', false),
  // Not a screen of the spec: loans and payments, for ADMIN and SUPERADMIN; a USER with
  // deviceDetails sees a device's loan on Device Details.
  s('loans', 'Loans', 'Loans and Payments', 'admin', false),
  s('logout', 'Logout', 'Logout', 'signedIn'),
] as const satisfies readonly Screen[];

export type ScreenName = (typeof SCREENS)[number]['name'];

const byName = new Map<string, Screen>(SCREENS.map((screen) => [screen.name, screen]));

export function screenByName(name: string): Screen | undefined {
  return byName.get(name);
}

/**
 * The permission list seeded by a migration: one per screen name other than home and logout (batch
 * shares setWallpaper's).
 */
export const PERMISSION_NAMES: readonly string[] = SCREENS.filter((screen) => screen.permission).map(
  (screen) => screen.name,
);

/**
 * Whether a USER may be given a permission: it must open something for a USER. userManagement (ADMIN
 * only) and deviceAction (SUPERADMIN only) do nothing for one, so the console does not offer them and
 * the server refuses them (ADMIN and SUPERADMIN pass every permission check anyway).
 */
export function grantableToUser(permissionName: string): boolean {
  const screen = byName.get(permissionName);
  return screen?.permission === true && screen.guard !== 'admin' && screen.guard !== 'superadminOnly';
}

/**
 * The left sidebar per role, in order. Lock, unlock, block and unblock sit beside Release
 * Device, and Revoke Credit beside Enable Credit; SUPERADMIN has no Enable Credit entry but gains
 * Device Action and Last Command, and always sees User Management. Key Management (which the spec's
 * sidebar leaves out) shows for those who may use it: ADMIN, SUPERADMIN, or a USER holding its permission.
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
  'batches',
  'appversion',
  'auditReport',
  'webhooks',
  'collections',
  'loans',
  'keyManagement',
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
  'batches',
  'appversion',
  'auditReport',
  'auditLog',
  'webhooks',
  'collections',
  'loans',
  'keyManagement',
  'logout',
];

export const SUPERADMIN_PREFIX = '/superadmin';

/** The path of a screen for a role: `/lockDevice` or `/superadmin/lockDevice`; home is `/` or `/superadmin`. */
export function screenPath(name: ScreenName, superadmin: boolean): string {
  const base = superadmin ? SUPERADMIN_PREFIX : '';
  return name === 'home' ? base || '/' : `${base}/${name}`;
}

/**
 * Sidebar entries (paths) for a signed-in user level and the permission names the session holds (they
 * decide only whether a USER sees Key Management).
 */
export function sidebarFor(
  level: UserLevel | string | undefined,
  permissions: readonly string[] = [],
): { name: ScreenName; path: string }[] {
  if (level === 'SUPERADMIN') {
    return SIDEBAR_SUPERADMIN.map((name) => ({ name, path: screenPath(name, true) }));
  }
  const shown = (name: ScreenName) => {
    if (name === 'userManagement' || name === 'webhooks' || name === 'collections' || name === 'loans')
      return level === 'ADMIN';
    if (name === 'keyManagement') return level === 'ADMIN' || permissions.includes('keyManagement');
    return true;
  };
  return SIDEBAR_USER.filter(shown).map((name) => ({
    name,
    path: screenPath(name, false),
  }));
}
