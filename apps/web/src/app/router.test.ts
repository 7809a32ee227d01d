import { SCREENS } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { appRoutes } from './router';

const childPaths = (layoutPath: string) => {
  const layout = appRoutes.find((route) => route.path === layoutPath);
  return (layout?.children ?? []).map((child) => (child.index ? '(index)' : child.path));
};

/** The layout's child routes of the original console's screens, typed here by hand, not read from SCREENS. */
const SPEC_CHILDREN = [
  '(index)',
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
  'userManagement',
  'reports',
  'gradeDisableApp',
  'batch',
  'appversion',
  'lastCommand',
  'formattedDevice',
  'auditReport',
  'keyManagement',
  'logout',
];

describe('route table', () => {
  it('has the public sign-in and password routes', () => {
    const publicPaths = appRoutes.filter((route) => !route.children).map((route) => route.path);
    expect(publicPaths).toEqual([
      '/login',
      '/superadmin/login',
      '/forgotPassword',
      '/resetPassword/:token',
      '/resetPassword',
      // Not in the spec: two-factor set-up, signed in but outside the layout (the page checks the session).
      '/twoFactor',
      '*',
    ]);
  });

  it('the layout at / has an index and every screen but deviceAction and auditLog', () => {
    expect([...childPaths('/')].sort()).toEqual(
      [...SPEC_CHILDREN, 'webhooks', 'collections', 'loans', 'batches'].sort(),
    );
  });

  it('/superadmin/ repeats the set and adds deviceAction and the audit log search', () => {
    expect([...childPaths('/superadmin')].sort()).toEqual(
      [...SPEC_CHILDREN, 'deviceAction', 'auditLog', 'webhooks', 'collections', 'loans', 'batches'].sort(),
    );
  });

  it('every screen of the table is routed', () => {
    const routed = new Set(childPaths('/superadmin'));
    for (const screen of SCREENS)
      expect(routed.has(screen.name === 'home' ? '(index)' : screen.name)).toBe(true);
  });
});
