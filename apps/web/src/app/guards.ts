/**
 * Route guards, as the contract's `ScreenGuard` encodes them. Pure, so it is tested exhaustively.
 * One departure from the original console: where it sent a signed-in user to /login (userManagement without
 * ADMIN, a `/superadmin/` route without SUPERADMIN), the unauthorised page shows instead, because /login
 * ends the session: a guard never signs anyone out. Signed out, every screen still goes to /login.
 */
import {
  BATCH_SCREENS,
  LOGGED_IN,
  passesEveryPermission,
  type Screen,
  type Session,
} from '@lendlock/contract';

/** allow: render the screen; login: redirect to /login; unauthorised: show the unauthorised page. */
export type Access = 'allow' | 'login' | 'unauthorised';

export function decideAccess(
  session: Pick<Session, 'loggedin' | 'userlevel' | 'permissions'> | null,
  screen: Pick<Screen, 'name' | 'guard' | 'grant'>,
  superadminPrefix: boolean,
): Access {
  if (session === null || session.loggedin !== LOGGED_IN) return 'login';
  if (superadminPrefix && session.userlevel !== 'SUPERADMIN') return 'unauthorised';
  switch (screen.guard) {
    case 'signedIn':
      return 'allow';
    case 'admin':
      // userManagement: userlevel ADMIN under `/`; under `/superadmin/` the SUPERADMIN check above applies.
      return superadminPrefix || session.userlevel === 'ADMIN' ? 'allow' : 'unauthorised';
    case 'superadminOnly':
      // Not routed under `/` (router.tsx); kept for a route table that would.
      return superadminPrefix ? 'allow' : 'unauthorised';
    case 'permission':
      // The screen's grant: its own name, or the one it shares (batch opens with setWallpaper).
      return passesEveryPermission(session.userlevel) ||
        session.permissions.some((permission) => permission.permission_name === screen.grant)
        ? 'allow'
        : 'unauthorised';
    case 'anyBatch':
      // Batches: whoever may run a batch of some screen (the server lists only what they may see).
      return passesEveryPermission(session.userlevel) ||
        session.permissions.some((permission) =>
          (BATCH_SCREENS as readonly string[]).includes(permission.permission_name),
        )
        ? 'allow'
        : 'unauthorised';
  }
}
