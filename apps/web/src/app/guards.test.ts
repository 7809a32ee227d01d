import { type Permission, SCREENS, type Session, USER_LEVELS, type UserLevel } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { decideAccess } from './guards';

/** Screens spec §6 guards by permission (every route of §2 except home, logout, keyManagement,
 * userManagement and deviceAction), typed here from the spec to catch a mis-tagged row in SCREENS. */
const PERMISSION_SCREENS = [
  'lockDevice',
  'blockApp',
  'unblockapp',
  'unlockDevice',
  'disableApp',
  'restoreApp',
  'setWallpaper',
  'removeWallpaper',
  'activateAlarm',
  'deactivateAlarm',
  'releaseDevice',
  'deviceDetails',
  'enableNotification',
  'enableCamera',
  'disableCamera',
  'enableCredit',
  'revokeCredit',
  'reports',
  'gradeDisableApp',
  'batch',
  'appversion',
  'lastCommand',
  'formattedDevice',
  'auditReport',
];
const ALWAYS_ALLOWED = ['home', 'logout', 'keyManagement'];

const session = (userlevel: UserLevel, permissionNames: string[] = []): Session => ({
  status: 'success',
  message: 'Login successful',
  expiry: '2099-01-01T00:00:00.000Z',
  token: 't',
  email: 'someone@lendlock.com',
  userlevel,
  loggedin: 'loginValidated',
  permissions: permissionNames.map((permission_name, i): Permission => ({ id: i + 1, permission_name })),
});

const ALL_PERMISSIONS = SCREENS.map((screen) => screen.name);

describe('decideAccess', () => {
  it('the spec lists match the screen table', () => {
    expect(SCREENS.filter((s) => s.guard === 'permission').map((s) => s.name)).toEqual(PERMISSION_SCREENS);
    expect(SCREENS.filter((s) => s.guard === 'signedIn').map((s) => s.name)).toEqual([
      'home',
      'keyManagement',
      'logout',
    ]);
  });

  describe.each([false, true])('superadmin prefix %s', (prefix) => {
    it.each(SCREENS.map((s) => [s.name, s] as const))(
      '%s: no session or not loginValidated → login',
      (_, screen) => {
        expect(decideAccess(null, screen, prefix)).toBe('login');
        const notValidated = {
          ...session('SUPERADMIN', ALL_PERMISSIONS),
          loggedin: 'no',
        } as unknown as Session;
        expect(decideAccess(notValidated, screen, prefix)).toBe('login');
      },
    );
  });

  describe('under /superadmin/', () => {
    it.each(SCREENS.map((s) => [s.name, s] as const))(
      '%s: only SUPERADMIN passes, others go to /login',
      (_, screen) => {
        expect(decideAccess(session('SUPERADMIN'), screen, true)).toBe('allow');
        expect(decideAccess(session('ADMIN', ALL_PERMISSIONS), screen, true)).toBe('login');
        expect(decideAccess(session('USER', ALL_PERMISSIONS), screen, true)).toBe('login');
      },
    );
  });

  describe('under /', () => {
    const screen = (name: string) => {
      const found = SCREENS.find((s) => s.name === name);
      if (!found) throw new Error(name);
      return found;
    };

    it.each(ALWAYS_ALLOWED)('%s is open to every signed-in level without any permission', (name) => {
      for (const level of USER_LEVELS)
        expect(decideAccess(session(level), screen(name), false)).toBe('allow');
    });

    it.each(PERMISSION_SCREENS)('%s: ADMIN and SUPERADMIN pass without permissions', (name) => {
      expect(decideAccess(session('ADMIN'), screen(name), false)).toBe('allow');
      expect(decideAccess(session('SUPERADMIN'), screen(name), false)).toBe('allow');
    });

    it.each(PERMISSION_SCREENS)('%s: a USER needs the permission named after the screen', (name) => {
      expect(decideAccess(session('USER', [name]), screen(name), false)).toBe('allow');
      expect(decideAccess(session('USER'), screen(name), false)).toBe('unauthorised');
      const others = ALL_PERMISSIONS.filter((p) => p !== name);
      expect(decideAccess(session('USER', others), screen(name), false)).toBe('unauthorised');
      const wrongCase = name.toUpperCase();
      expect(decideAccess(session('USER', [wrongCase]), screen(name), false)).toBe('unauthorised');
    });

    it('userManagement needs userlevel ADMIN, otherwise /login (even with the permission)', () => {
      expect(decideAccess(session('ADMIN'), screen('userManagement'), false)).toBe('allow');
      expect(decideAccess(session('USER', ['userManagement']), screen('userManagement'), false)).toBe(
        'login',
      );
      expect(decideAccess(session('SUPERADMIN'), screen('userManagement'), false)).toBe('login');
    });

    it('deviceAction is reachable only by SUPERADMIN under /superadmin/', () => {
      for (const level of USER_LEVELS) {
        expect(decideAccess(session(level, ALL_PERMISSIONS), screen('deviceAction'), false)).toBe('login');
      }
      expect(decideAccess(session('SUPERADMIN'), screen('deviceAction'), true)).toBe('allow');
    });
  });
});
