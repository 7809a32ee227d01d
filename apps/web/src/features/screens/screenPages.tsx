/**
 * Which page renders each screen of the table. A screen without an entry shows its title
 * (ScreenTitlePage); building a screen is adding one row here.
 */
import type { Screen, ScreenName } from '@lendlock/contract';
import { type ComponentType, type LazyExoticComponent, lazy } from 'react';
import { COMMAND_SCREEN_NAMES } from '../commands/commandScreens';

type ScreenPage = LazyExoticComponent<ComponentType<{ screen: Screen }>>;

const ScreenTitlePage: ScreenPage = lazy(() => import('./ScreenTitlePage'));
const CommandScreen: ScreenPage = lazy(() => import('../commands/CommandScreen'));

const SCREEN_PAGES: Partial<Record<ScreenName, ScreenPage>> = {
  home: lazy(() => import('../../pages/Dashboard/DashboardPage')),
  deviceDetails: lazy(() => import('../../pages/Devices/DeviceDetails/DeviceDetailsPage')),
  auditReport: lazy(() => import('../../pages/Audit/AuditReport/AuditReportPage')),
  appversion: lazy(() => import('../../pages/AppVersion/AppVersionPage')),
  lastCommand: lazy(() => import('../../pages/LastCommand/LastCommandPage')),
  logout: lazy(() => import('../../pages/Auth/Logout/LogoutPage')),
  userManagement: lazy(() => import('../../pages/Users/UserManagementPage')),
  keyManagement: lazy(() => import('../../pages/Keys/KeyManagementPage')),
  reports: lazy(() => import('../../pages/Reports/ReportsPage')),
  auditLog: lazy(() => import('../../pages/AuditLog/AuditLogPage')),
  webhooks: lazy(() => import('../../pages/Webhooks/WebhooksPage')),
  collections: lazy(() => import('../../pages/Collections/CollectionsPage')),
  loans: lazy(() => import('../../pages/Loans/LoansPage')),
  batches: lazy(() => import('../../pages/Batches/BatchesPage')),
  // Every command screen of the definition table (and the `batch` alias) is the one CommandScreen.
  ...Object.fromEntries(COMMAND_SCREEN_NAMES.map((name) => [name, CommandScreen])),
  deviceAction: lazy(() => import('../../pages/DeviceAction/DeviceActionPage')),
};

export function pageFor(screen: Screen): ScreenPage {
  return SCREEN_PAGES[screen.name as ScreenName] ?? ScreenTitlePage;
}
