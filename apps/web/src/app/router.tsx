/**
 * The console's routes: the public sign-in pages, the layout at `/` with every screen of the table except
 * deviceAction, and the same set plus deviceAction under `/superadmin/`. The signed-in shell and every
 * page but login are loaded lazily, so the login route's JS stays small.
 */
import { SCREENS, type Screen, SUPERADMIN_PREFIX, screenByName } from '@lendlock/contract';
import { lazy, type ReactNode, Suspense } from 'react';
import { createBrowserRouter, Navigate, type RouteObject } from 'react-router';
import LoginPage from '../pages/Auth/Login/LoginPage';
import { TWO_FACTOR_PATH } from '../pages/Auth/TwoFactor/paths';
import { Guard } from './Guard';
import { PageLoader } from './PageLoader';
import { ScreenRoute } from './ScreenRoute';

const Shell = lazy(() => import('./layout/Shell'));
const ForgotPasswordPage = lazy(() => import('../pages/Auth/ForgotPassword/ForgotPasswordPage'));
const ResetPasswordPage = lazy(() => import('../pages/Auth/ResetPassword/ResetPasswordPage'));
const TwoFactorPage = lazy(() => import('../pages/Auth/TwoFactor/TwoFactorPage'));

const suspended = (node: ReactNode) => <Suspense fallback={<PageLoader />}>{node}</Suspense>;

function requireScreen(name: string): Screen {
  const screen = screenByName(name);
  if (!screen) throw new Error(`No screen named ${name}`);
  return screen;
}

function layoutRoute(superadmin: boolean): RouteObject {
  const home = requireScreen('home');
  const screens = SCREENS.filter((screen) => superadmin || screen.guard !== 'superadminOnly');
  return {
    path: superadmin ? SUPERADMIN_PREFIX : '/',
    element: (
      <Guard screen={home} superadmin={superadmin}>
        {suspended(<Shell />)}
      </Guard>
    ),
    children: screens.map((screen) => {
      // Keyed, so moving between two screens never carries one screen's state into the next.
      const element = <ScreenRoute key={screen.name} screen={screen} superadmin={superadmin} />;
      return screen.name === 'home' ? { index: true, element } : { path: screen.name, element };
    }),
  };
}

export const appRoutes: RouteObject[] = [
  { path: '/login', element: <LoginPage client="console" /> },
  { path: `${SUPERADMIN_PREFIX}/login`, element: <LoginPage client="superadmin" /> },
  { path: '/forgotPassword', element: suspended(<ForgotPasswordPage />) },
  { path: '/resetPassword/:token', element: suspended(<ResetPasswordPage />) },
  { path: '/resetPassword', element: suspended(<ResetPasswordPage />) },
  // Two-factor set-up: outside the layout, which an account that must set it up may not enter yet.
  { path: TWO_FACTOR_PATH, element: suspended(<TwoFactorPage />) },
  layoutRoute(false),
  layoutRoute(true),
  { path: '*', element: <Navigate to="/" replace /> },
];

export function createAppRouter() {
  return createBrowserRouter(appRoutes);
}
