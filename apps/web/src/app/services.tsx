/** What every screen needs from start-up: runtime config, the session store and the API client. */
import type { RuntimeConfig } from '@lendlock/contract';
import { createContext, type ReactNode, use } from 'react';
import type { ApiClient } from '../api/client';
import type { SessionActivity } from './session/activity';
import type { SessionStore } from './session/store';

export interface Services {
  config: RuntimeConfig;
  sessions: SessionStore;
  api: ApiClient;
  /** The session's last use, for the idle warning (absent: no warning). */
  activity?: SessionActivity;
}

const ServicesContext = createContext<Services | null>(null);

export function ServicesProvider({ services, children }: { services: Services; children: ReactNode }) {
  return <ServicesContext value={services}>{children}</ServicesContext>;
}

export function useServices(): Services {
  const services = use(ServicesContext);
  if (services === null) throw new Error('useServices needs a ServicesProvider');
  return services;
}
