import { describe, expect, it } from 'vitest';
import { grantableToUser, PERMISSION_NAMES, SCREENS, screenByName, screenPath, sidebarFor } from './screens';

describe('screens', () => {
  it('has every route of the original console under / plus deviceAction', () => {
    // Typed by hand: the layout at / has an index page and these child routes.
    const specChildren =
      'lockDevice, blockApp, unblockapp, unlockDevice, disableApp, restoreApp, setWallpaper, removeWallpaper, activateAlarm, deactivateAlarm, releaseDevice, deviceDetails, enableNotification, enableCamera, disableCamera, enableCredit, revokeCredit, userManagement, reports, gradeDisableApp, batch, appversion, lastCommand, formattedDevice, auditReport, keyManagement, logout'.split(
        ', ',
      );
    // Plus the SUPERADMIN's audit log search, the webhooks, the batches, collections and loans, not
    // screens of the spec.
    expect(SCREENS.map((s) => s.name).sort()).toEqual(
      [
        'home',
        'deviceAction',
        'auditLog',
        'webhooks',
        'batches',
        'collections',
        'loans',
        ...specChildren,
      ].sort(),
    );
  });

  it('seeds one permission per screen name other than home and logout', () => {
    // auditLog (SUPERADMIN), webhooks and collections (ADMIN and SUPERADMIN) and batches (whoever runs a
    // batch) have no permission to grant; batch (the second Set Wallpaper route) shares setWallpaper's.
    // loans (ADMIN and SUPERADMIN) has none either.
    expect(PERMISSION_NAMES).toHaveLength(SCREENS.length - 8);
    expect(PERMISSION_NAMES).not.toContain('loans');
    expect(PERMISSION_NAMES).not.toContain('batch');
    expect(screenByName('batch')?.grant).toBe('setWallpaper');
    expect(PERMISSION_NAMES).not.toContain('collections');
    expect(PERMISSION_NAMES).not.toContain('auditLog');
    expect(PERMISSION_NAMES).not.toContain('webhooks');
    expect(PERMISSION_NAMES).not.toContain('batches');
    expect(PERMISSION_NAMES).not.toContain('home');
    expect(PERMISSION_NAMES).not.toContain('logout');
    expect(PERMISSION_NAMES).toContain('deviceAction');
  });

  it('gives USER the spec sidebar without User Management, and ADMIN the same with it and Webhooks', () => {
    const user = sidebarFor('USER').map((e) => e.path);
    expect(user).toEqual([
      '/',
      '/enableNotification',
      '/setWallpaper',
      '/removeWallpaper',
      '/activateAlarm',
      '/deactivateAlarm',
      '/gradeDisableApp',
      '/disableApp',
      '/restoreApp',
      '/disableCamera',
      '/enableCamera',
      '/releaseDevice',
      '/lockDevice',
      '/unlockDevice',
      '/blockApp',
      '/unblockapp',
      '/deviceDetails',
      '/formattedDevice',
      '/enableCredit',
      '/revokeCredit',
      '/reports',
      '/batches',
      '/appversion',
      '/auditReport',
      '/logout',
    ]);
    const adminPaths = sidebarFor('ADMIN').map((e) => e.path);
    expect(
      adminPaths.filter(
        (p) => !['/userManagement', '/webhooks', '/collections', '/loans', '/keyManagement'].includes(p),
      ),
    ).toEqual(user);
    expect(adminPaths.at(-2)).toBe('/keyManagement');
    expect(adminPaths.indexOf('/userManagement')).toBe(adminPaths.indexOf('/revokeCredit') + 1);
    expect(adminPaths.indexOf('/webhooks')).toBe(adminPaths.indexOf('/auditReport') + 1);
    expect(adminPaths.indexOf('/collections')).toBe(adminPaths.indexOf('/webhooks') + 1);
    expect(adminPaths.indexOf('/loans')).toBe(adminPaths.indexOf('/collections') + 1);
  });

  it('gives SUPERADMIN the /superadmin/ sidebar with deviceAction, lastCommand, User Management and no enableCredit', () => {
    const paths = sidebarFor('SUPERADMIN').map((e) => e.path);
    expect(paths.every((p) => p.startsWith('/superadmin'))).toBe(true);
    expect(paths).toContain('/superadmin/deviceAction');
    expect(paths).toContain('/superadmin/lastCommand');
    expect(paths).toContain('/superadmin/userManagement');
    expect(paths).toContain('/superadmin/webhooks');
    expect(paths).toContain('/superadmin/batches');
    expect(paths).toContain('/superadmin/collections');
    expect(paths).toContain('/superadmin/loans');
    expect(paths).not.toContain('/superadmin/enableCredit');
    expect(paths[0]).toBe('/superadmin');
    expect(paths.at(-1)).toBe('/superadmin/logout');
    expect(paths.at(-2)).toBe('/superadmin/keyManagement');
  });

  it('shows Key Management to a USER only with its permission', () => {
    expect(sidebarFor('USER').map((e) => e.name)).not.toContain('keyManagement');
    const held = sidebarFor('USER', ['keyManagement', 'reports']).map((e) => e.path);
    expect(held.at(-2)).toBe('/keyManagement');
    expect(held.filter((p) => p !== '/keyManagement')).toEqual(sidebarFor('USER').map((e) => e.path));
  });

  it('grants a USER every permission but those that open nothing for one (User Management, Device Action)', () => {
    expect(PERMISSION_NAMES.filter((name) => !grantableToUser(name))).toEqual([
      'userManagement',
      'deviceAction',
    ]);
    for (const name of ['batch', 'batches', 'home', 'auditLog', 'unknown'])
      expect(grantableToUser(name)).toBe(false);
  });

  it('builds paths for both prefixes', () => {
    expect(screenPath('home', false)).toBe('/');
    expect(screenPath('home', true)).toBe('/superadmin');
    expect(screenPath('reports', true)).toBe('/superadmin/reports');
  });
});
