import type { Session } from '@lendlock/contract';
import { useSyncExternalStore } from 'react';
import { useServices } from '../services';

/** The current session (null when signed out), re-rendering on every change. */
export function useSession(): Session | null {
  const { sessions } = useServices();
  return useSyncExternalStore(sessions.subscribe, sessions.get);
}
