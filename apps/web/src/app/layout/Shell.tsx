/**
 * The signed-in layout: top bar with the product label and clock, red expiry notice, the warning a
 * minute before an idle end, sidebar.
 * Its first tab stop is 'Skip to main content' (WCAG 2.2 AA), which moves the focus past the top bar
 * and the sidebar to the main region.
 */
import { MESSAGES } from '@lendlock/contract';
import { AppShell, Burger, Group, Text } from '@mantine/core';
import { useDisclosure } from '@mantine/hooks';
import { Suspense, useCallback } from 'react';
import { Outlet, useNavigate } from 'react-router';
import { getMfaStatus } from '../../api/mfa';
import { formatLocalDateTime } from '../../lib/datetime';
import { LABELS } from '../../lib/labels';
import { PageLoader } from '../PageLoader';
import { useServices } from '../services';
import { IdleWarning } from '../session/IdleWarning';
import { useSession } from '../session/useSession';
import { AccountMenu } from './AccountMenu';
import { Clock } from './Clock';
import { Sidebar } from './Sidebar';
import { MAIN_CONTENT_ID, SkipLink } from './SkipLink';

export default function Shell() {
  const { config, sessions, api, activity } = useServices();
  const session = useSession();
  const navigate = useNavigate();
  const [opened, { toggle, close }] = useDisclosure(false);
  const lastUsedAt = useCallback(() => activity?.lastUsedAt() ?? null, [activity]);
  const stay = useCallback(() => getMfaStatus(api), [api]);
  const idle = useCallback(() => {
    sessions.end({ reason: 'idle' });
    void navigate('/login', { replace: true });
  }, [sessions, navigate]);
  if (session === null) return null;

  return (
    <AppShell
      header={{ height: 56 }}
      navbar={{ width: 250, breakpoint: 'sm', collapsed: { mobile: !opened } }}
      padding="md"
    >
      <SkipLink />
      <AppShell.Header>
        <Group h="100%" px="md" justify="space-between" wrap="nowrap">
          <Group gap="sm" wrap="nowrap">
            <Burger
              opened={opened}
              onClick={toggle}
              hiddenFrom="sm"
              size="sm"
              aria-label={LABELS.toggleNavigation}
            />
            <Text fw={700} size="lg" data-testid="product-label">
              {config.productLabel}
            </Text>
          </Group>
          <Group gap="md" wrap="nowrap">
            <AccountMenu email={session.email} />
            <Clock />
          </Group>
        </Group>
      </AppShell.Header>
      <AppShell.Navbar p="xs" component="nav" aria-label={LABELS.mainNavigation} data-testid="sidebar">
        <Sidebar level={session.userlevel} onNavigate={close} />
      </AppShell.Navbar>
      <AppShell.Main id={MAIN_CONTENT_ID} tabIndex={-1} className="skip-target">
        {config.sessionIdleTimeoutMs && activity ? (
          <IdleWarning
            idleTimeoutMs={config.sessionIdleTimeoutMs}
            lastUsedAt={lastUsedAt}
            onStay={stay}
            onIdle={idle}
            intervalMs={config.sessionCheckIntervalMs}
          />
        ) : null}
        <Text c="red" fw={500} mb="md" role="status" data-testid="expiry-notice">
          {MESSAGES.noticeExpires(formatLocalDateTime(session.expiry))}
        </Text>
        <Suspense fallback={<PageLoader />}>
          <Outlet />
        </Suspense>
      </AppShell.Main>
    </AppShell>
  );
}
