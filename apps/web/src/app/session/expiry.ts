import { isSessionExpired, type SessionStore } from './store';

/**
 * A timer checks the expiry every `intervalMs` (config.sessionCheckIntervalMs, 1 s); once it is
 * reached the session is removed, noted as expired (/login says so), and `onExpired` runs (the app
 * navigates to /login). Returns a stop function.
 */
export function watchSessionExpiry(
  store: Pick<SessionStore, 'get' | 'end'>,
  options: { intervalMs: number; onExpired: () => void; now?: () => number },
): () => void {
  const now = options.now ?? Date.now;
  const check = () => {
    const session = store.get();
    if (session !== null && isSessionExpired(session, now())) {
      store.end({ reason: 'expired' });
      options.onExpired();
    }
  };
  check();
  const timer = setInterval(check, options.intervalMs);
  return () => clearInterval(timer);
}
