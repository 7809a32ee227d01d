/**
 * When the session was last used: the start of the last call the server answered with it (or of the
 * sign-in). The server ends a session unused for SESSION_IDLE_TIMEOUT, counting from the calls it
 * received, which are never earlier than these starts: counting from here the console is never late.
 * Kept in localStorage, so that every tab sees the calls of the others.
 */
import type { SessionStorageLike } from './store';

export const LAST_USE_STORAGE_KEY = 'sessionLastUse';

export interface SessionActivity {
  /** A call started at `at` (epoch ms) was answered other than 'Authorization Failed'. */
  markUsed(at: number): void;
  /** The last such call's start, or null when none was recorded. */
  lastUsedAt(): number | null;
}

export function createSessionActivity(storage: SessionStorageLike): SessionActivity {
  return {
    markUsed(at) {
      const last = Number(storage.getItem(LAST_USE_STORAGE_KEY));
      if (!(last >= at)) storage.setItem(LAST_USE_STORAGE_KEY, String(at));
    },
    lastUsedAt() {
      const value = Number(storage.getItem(LAST_USE_STORAGE_KEY) ?? Number.NaN);
      return Number.isFinite(value) ? value : null;
    },
  };
}
