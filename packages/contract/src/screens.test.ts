import { describe, expect, it } from 'vitest';
import { PERMISSION_NAMES, SCREENS, screenPath, sidebarFor } from './screens';

describe('screens', () => {
  it('has every route of spec §2 under / plus deviceAction', () => {
    // Typed from spec §2 "The layout at / has an index page and these child routes".
    const specChildren =
      'lockDevice, blockApp, unblockapp, unlockDevice, disableApp, restoreApp, setWallpaper, removeWallpaper, activateAlarm, deactivateAlarm, releaseDevice, deviceDetails, enableNotification, enableCamera, disableCamera, enableCredit, revokeCredit, userManagement, reports, gradeDisableApp, batch, appversion, lastCommand, formattedDevice, auditReport, keyManagement, logout'.split(
        ', ',
      );
    // Plus the SUPERADMIN's audit log search (issue 9) and the webhooks (issue 18), not screens of the spec.
    expect(SCREENS.map((s) => s.name).sort()).toEqual(
      ['home', 'deviceAction', 'auditLog', 'webhooks', ...specChildren].sort(),
    );
  });

  it('seeds one permission per screen name other than home and logout', () => {
    // auditLog (SUPERADMIN) and webhooks (ADMIN and SUPERADMIN) have no permission to grant.
    expect(PERMISSION_NAMES).toHaveLength(SCREENS.length - 4);
    expect(PERMISSION_NAMES).not.toContain('auditLog');
    expect(PERMISSION_NAMES).not.toContain('webhooks');
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
      '/appversion',
      '/auditReport',
      '/logout',
    ]);
    const adminPaths = sidebarFor('ADMIN').map((e) => e.path);
    expect(adminPaths.filter((p) => p !== '/userManagement' && p !== '/webhooks')).toEqual(user);
    expect(adminPaths.indexOf('/userManagement')).toBe(adminPaths.indexOf('/revokeCredit') + 1);
    expect(adminPaths.indexOf('/webhooks')).toBe(adminPaths.indexOf('/auditReport') + 1);
  });

  it('gives SUPERADMIN the /superadmin/ sidebar with deviceAction, lastCommand, User Management and no enableCredit', () => {
    const paths = sidebarFor('SUPERADMIN').map((e) => e.path);
    expect(paths.every((p) => p.startsWith('/superadmin'))).toBe(true);
    expect(paths).toContain('/superadmin/deviceAction');
    expect(paths).toContain('/superadmin/lastCommand');
    expect(paths).toContain('/superadmin/userManagement');
    expect(paths).toContain('/superadmin/webhooks');
    expect(paths).not.toContain('/superadmin/enableCredit');
    expect(paths[0]).toBe('/superadmin');
    expect(paths.at(-1)).toBe('/superadmin/logout');
  });

  it('builds paths for both prefixes', () => {
    expect(screenPath('home', false)).toBe('/');
    expect(screenPath('home', true)).toBe('/superadmin');
    expect(screenPath('reports', true)).toBe('/superadmin/reports');
  });
});
