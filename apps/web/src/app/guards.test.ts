import { type Permission, SCREENS, type Session, USER_LEVELS, type UserLevel } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { decideAccess } from './guards';

/** Screens guarded by permission (every child route except home, logout, keyManagement,
 * userManagement and deviceAction), typed here by hand to catch a mis-tagged row in SCREENS. */
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
/** Screens that open with another screen's grant (one screen, two routes). */
const GRANTS: Record<string, string> = { batch: 'setWallpaper' };

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
    // Not /login, which would end their session: a guard never signs anyone out.
    it.each(SCREENS.map((s) => [s.name, s] as const))(
      '%s: only SUPERADMIN passes, others see the unauthorised page and stay signed in',
      (_, screen) => {
        expect(decideAccess(session('SUPERADMIN'), screen, true)).toBe('allow');
        expect(decideAccess(session('ADMIN', ALL_PERMISSIONS), screen, true)).toBe('unauthorised');
        expect(decideAccess(session('USER', ALL_PERMISSIONS), screen, true)).toBe('unauthorised');
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

    it.each(PERMISSION_SCREENS)("%s: a USER needs the screen's grant", (name) => {
      const grant = GRANTS[name] ?? name;
      expect(decideAccess(session('USER', [grant]), screen(name), false)).toBe('allow');
      expect(decideAccess(session('USER'), screen(name), false)).toBe('unauthorised');
      const others = ALL_PERMISSIONS.filter((p) => p !== grant);
      expect(decideAccess(session('USER', others), screen(name), false)).toBe('unauthorised');
      const wrongCase = grant.toUpperCase();
      expect(decideAccess(session('USER', [wrongCase]), screen(name), false)).toBe('unauthorised');
    });

    it('the two Set Wallpaper routes open with one grant, setWallpaper; batch is no grant of its own', () => {
      expect(screen('batch').grant).toBe('setWallpaper');
      expect(screen('batch').permission).toBe(false);
      for (const name of ['setWallpaper', 'batch']) {
        expect(decideAccess(session('USER', ['setWallpaper']), screen(name), false)).toBe('allow');
        expect(decideAccess(session('USER', ['batch']), screen(name), false)).toBe('unauthorised');
      }
    });

    it('userManagement needs userlevel ADMIN; others see the unauthorised page (a held permission changes nothing)', () => {
      expect(decideAccess(session('ADMIN'), screen('userManagement'), false)).toBe('allow');
      for (const held of [[], ['userManagement']]) {
        expect(decideAccess(session('USER', held), screen('userManagement'), false)).toBe('unauthorised');
      }
      expect(decideAccess(session('SUPERADMIN'), screen('userManagement'), false)).toBe('unauthorised');
    });

    it('deviceAction is reachable only by SUPERADMIN under /superadmin/', () => {
      for (const level of USER_LEVELS) {
        expect(decideAccess(session(level, ALL_PERMISSIONS), screen('deviceAction'), false)).toBe(
          'unauthorised',
        );
      }
      expect(decideAccess(session('SUPERADMIN'), screen('deviceAction'), true)).toBe('allow');
    });

    it('loans: ADMIN passes (SUPERADMIN under /superadmin/); a USER sees the unauthorised page, whatever it holds', () => {
      expect(decideAccess(session('ADMIN'), screen('loans'), false)).toBe('allow');
      expect(decideAccess(session('SUPERADMIN'), screen('loans'), true)).toBe('allow');
      expect(decideAccess(session('USER', ['deviceDetails', 'loans']), screen('loans'), false)).toBe(
        'unauthorised',
      );
    });

    it('batches: ADMIN and SUPERADMIN pass; a USER needs the permission of a screen that runs a batch', () => {
      expect(decideAccess(session('ADMIN'), screen('batches'), false)).toBe('allow');
      expect(decideAccess(session('SUPERADMIN'), screen('batches'), false)).toBe('allow');
      expect(decideAccess(session('USER', ['lockDevice']), screen('batches'), false)).toBe('allow');
      expect(decideAccess(session('USER', ['enableNotification']), screen('batches'), false)).toBe('allow');
      // Screens without a batch form, and the permission named after the screen (there is none to grant).
      for (const held of [[], ['reports', 'deviceDetails', 'formattedDevice', 'lastCommand'], ['batches']])
        expect(decideAccess(session('USER', held), screen('batches'), false)).toBe('unauthorised');
    });
  });
});
