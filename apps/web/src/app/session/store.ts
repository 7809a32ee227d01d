/**
 * The signed-in session (spec §3/§4) in memory, mirrored to localStorage as an envelope.
 * `userSession` holds `{payload, transactionId}` sealed with the envelope codec; `expiry` holds the
 * expiry on its own. Components read the in-memory copy through `useSession` (useSyncExternalStore).
 */
import { type Session, sessionSchema, type WebEnvelopeCodec } from '@lendlock/contract';

export const SESSION_STORAGE_KEY = 'userSession';
export const EXPIRY_STORAGE_KEY = 'expiry';

export type SessionStorageLike = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export interface SessionStore {
  get(): Session | null;
  subscribe(listener: () => void): () => void;
  /** Reads and decrypts the stored session; a missing, unreadable or expired one is removed. */
  load(): Promise<Session | null>;
  /** Keeps the session in memory at once and stores it sealed. */
  save(session: Session): Promise<void>;
  /** Forgets the session in memory and in storage. */
  clear(): void;
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
  // Bumped by every change, so a slow seal or open never overwrites a newer state.
  let generation = 0;

  const set = (session: Session | null) => {
    if (session === current) return;
    current = session;
    for (const listener of listeners) listener();
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
        set(null);
        return null;
      }
      set(session);
      return session;
    },
    async save(session) {
      const started = ++generation;
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
  };
}
