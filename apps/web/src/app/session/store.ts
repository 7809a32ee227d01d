/**
 * The signed-in session (what login.php answers, and its expiry) in memory, mirrored to localStorage
 * as an envelope.
 * `userSession` holds `{payload, transactionId}` sealed with the envelope codec; `expiry` holds the
 * expiry on its own. Components read the in-memory copy through `useSession` (useSyncExternalStore).
 * A session that ended under the user (the server's 401, the expiry) leaves a note of why, and of what
 * they were sending, which /login shows until the next sign-in: no silent exits.
 */
import {
  type Session,
  type SessionEndReason,
  sessionSchema,
  type WebEnvelopeCodec,
} from '@lendlock/contract';

export const SESSION_STORAGE_KEY = 'userSession';
export const EXPIRY_STORAGE_KEY = 'expiry';

export type SessionStorageLike = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** Why the session ended under its user, and what they were sending then. */
export interface SessionEnd {
  /** The server's `reason`, 'expired' from the console's own timer, or null when nobody said. */
  reason: SessionEndReason | null;
  /** What was being sent when it ended (e.g. 'Lock to IMEI 356…'): it never reached the server. */
  notSent: string | null;
}

export interface SessionStore {
  get(): Session | null;
  subscribe(listener: () => void): () => void;
  /**
   * Reads and decrypts the stored session; a missing, unreadable or expired one is removed (an expired
   * one noted as such).
   */
  load(): Promise<Session | null>;
  /** Keeps the session in memory at once and stores it sealed; forgets any note of an ended one. */
  save(session: Session): Promise<void>;
  /** Forgets the session in memory and in storage. */
  clear(): void;
  /**
   * Forgets the session because it ended under its user, noting why. Several calls refused at once end
   * it once: a later note adds what it lacks (a reason, a command not sent) without erasing the first.
   */
  end(ending: Partial<SessionEnd>): void;
  /** The note of the last session that ended (the same object until it changes), or null. */
  ended(): SessionEnd | null;
}

export function isSessionExpired(session: Pick<Session, 'expiry'>, now: number = Date.now()): boolean {
  const expiry = Date.parse(session.expiry);
  return Number.isNaN(expiry) || now >= expiry;
}

export function createSessionStore(deps: {
  codec: Pick<WebEnvelopeCodec, 'seal' | 'open'>;
  storage: SessionStorageLike;
  now?: () => number;
}): SessionStore {
  const { codec, storage } = deps;
  const now = deps.now ?? Date.now;
  const listeners = new Set<() => void>();
  let current: Session | null = null;
  let lastEnd: SessionEnd | null = null;
  // Bumped by every change, so a slow seal or open never overwrites a newer state.
  let generation = 0;

  const set = (session: Session | null) => {
    if (session === current) return;
    current = session;
    for (const listener of listeners) listener();
  };

  const noteEnd = (ending: Partial<SessionEnd>) => {
    const reason = lastEnd?.reason ?? ending.reason ?? null;
    const notSent = lastEnd?.notSent ?? ending.notSent ?? null;
    if (lastEnd?.reason === reason && lastEnd.notSent === notSent) return false;
    lastEnd = { reason, notSent };
    return true;
  };

  const removeStored = () => {
    storage.removeItem(SESSION_STORAGE_KEY);
    storage.removeItem(EXPIRY_STORAGE_KEY);
  };

  const readStored = async (): Promise<Session | null> => {
    const raw = storage.getItem(SESSION_STORAGE_KEY);
    if (raw === null) return null;
    try {
      const parsed = sessionSchema.safeParse(await codec.open(JSON.parse(raw)));
      return parsed.success ? parsed.data : null;
    } catch {
      return null;
    }
  };

  return {
    get: () => current,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async load() {
      const started = ++generation;
      const session = await readStored();
      if (started !== generation) return current;
      if (session === null || isSessionExpired(session, now())) {
        if (storage.getItem(SESSION_STORAGE_KEY) !== null || storage.getItem(EXPIRY_STORAGE_KEY) !== null) {
          removeStored();
        }
        if (session !== null) noteEnd({ reason: 'expired' });
        set(null);
        return null;
      }
      // Signed in (here or in another tab): a note of an earlier end no longer applies.
      lastEnd = null;
      set(session);
      return session;
    },
    async save(session) {
      const started = ++generation;
      lastEnd = null;
      set(session);
      const sealed = await codec.seal(session);
      if (started !== generation) return;
      storage.setItem(SESSION_STORAGE_KEY, JSON.stringify(sealed));
      storage.setItem(EXPIRY_STORAGE_KEY, session.expiry);
    },
    clear() {
      generation++;
      removeStored();
      set(null);
    },
    end(ending) {
      const noted = noteEnd(ending);
      generation++;
      removeStored();
      if (current !== null) set(null);
      else if (noted) for (const listener of listeners) listener();
    },
    ended: () => lastEnd,
  };
}
