import { type Screen, SUPERADMIN_PREFIX } from '@lendlock/contract';
import type { ReactNode } from 'react';
import { Navigate } from 'react-router';
import { TWO_FACTOR_PATH } from '../pages/Auth/TwoFactor/paths';
import { UnauthorisedPage } from '../pages/Errors/Unauthorised/UnauthorisedPage';
import { decideAccess } from './guards';
import { useSession } from './session/useSession';

/** Renders `children` when the screen's guard lets the session see it; otherwise /login or unauthorised. */
export function Guard({
  screen,
  superadmin,
  children,
}: {
  screen: Screen;
  superadmin: boolean;
  children: ReactNode;
}) {
  const session = useSession();
  // A session that must set up two-factor authentication first (the server refuses it everything else).
  if (session?.mfa_enrolment_required) {
    return <Navigate to={TWO_FACTOR_PATH} replace state={{ next: superadmin ? SUPERADMIN_PREFIX : '/' }} />;
  }
  switch (decideAccess(session, screen, superadmin)) {
    case 'login':
      return <Navigate to="/login" replace />;
    case 'unauthorised':
      return <UnauthorisedPage />;
    case 'allow':
      return children;
  }
}
