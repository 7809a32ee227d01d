import type { Screen } from '@lendlock/contract';
import type { ReactNode } from 'react';
import { Navigate } from 'react-router';
import { UnauthorisedPage } from '../pages/Errors/Unauthorised/UnauthorisedPage';
import { decideAccess } from './guards';
import { useSession } from './session/useSession';

/** Renders `children` when spec §6 lets the current session see `screen`; otherwise /login or unauthorised. */
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
  switch (decideAccess(session, screen, superadmin)) {
    case 'login':
      return <Navigate to="/login" replace />;
    case 'unauthorised':
      return <UnauthorisedPage />;
    case 'allow':
      return children;
  }
}
