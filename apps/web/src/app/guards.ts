/**
 * Route guards of spec §6, as the contract's `ScreenGuard` encodes them. Pure, so it is tested exhaustively.
 */
import { LOGGED_IN, passesEveryPermission, type Screen, type Session } from '@lendlock/contract';

/** allow: render the screen; login: redirect to /login; unauthorised: show the unauthorised page. */
export type Access = 'allow' | 'login' | 'unauthorised';

export function decideAccess(
  session: Pick<Session, 'loggedin' | 'userlevel' | 'permissions'> | null,
  screen: Pick<Screen, 'name' | 'guard'>,
  superadminPrefix: boolean,
): Access {
  if (session === null || session.loggedin !== LOGGED_IN) return 'login';
  if (superadminPrefix && session.userlevel !== 'SUPERADMIN') return 'login';
  switch (screen.guard) {
    case 'signedIn':
      return 'allow';
    case 'admin':
      // userManagement: userlevel ADMIN under `/`; under `/superadmin/` the SUPERADMIN check above applies.
      return superadminPrefix || session.userlevel === 'ADMIN' ? 'allow' : 'login';
    case 'superadminOnly':
      return superadminPrefix ? 'allow' : 'login';
    case 'permission':
      return passesEveryPermission(session.userlevel) ||
        session.permissions.some((permission) => permission.permission_name === screen.name)
        ? 'allow'
        : 'unauthorised';
  }
}
