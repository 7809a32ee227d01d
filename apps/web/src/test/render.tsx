/**
 * Renders a screen part as the console does — Mantine, a TanStack query client (no retries) and the
 * services (a fake API client, a session store holding `session`, the runtime config) — into the
 * happy-dom document of a component test (`// @vitest-environment happy-dom`).
 */
import type { RuntimeConfig, Session } from '@lendlock/contract';
import { MantineProvider } from '@mantine/core';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render } from '@testing-library/react';
import type { ReactElement } from 'react';
import type { ApiClient } from '../api/client';
import { ServicesProvider } from '../app/services';
import type { SessionStore } from '../app/session/store';

export const TEST_SESSION: Session = {
  status: 'success',
  message: 'Login successful',
  expiry: '2099-01-01T00:00:00.000Z',
  token: 'tok-1',
  email: 'agent@lendlock.com',
  userlevel: 'ADMIN',
  loggedin: 'loginValidated',
  permissions: [],
};

export function renderWithServices(
  ui: ReactElement,
  { api, session = TEST_SESSION }: { api: ApiClient; session?: Session | null },
) {
  const sessions: SessionStore = {
    get: () => session,
    subscribe: () => () => {},
    load: async () => session,
    save: async () => {},
    clear: () => {},
    end: () => {},
    ended: () => null,
  };
  const config = { apiBase: '/api/', keyApiBase: '/keyapi/' } as RuntimeConfig;
  const queryClient = new QueryClient({
    defaultOptions: { queries: { retry: false }, mutations: { retry: false } },
  });
  return render(
    <MantineProvider>
      <QueryClientProvider client={queryClient}>
        <ServicesProvider services={{ api, sessions, config }}>{ui}</ServicesProvider>
      </QueryClientProvider>
    </MantineProvider>,
  );
}
