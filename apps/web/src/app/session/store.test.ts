import { createWebEnvelopeCodec, isEnvelope, type Session } from '@lendlock/contract';
import { describe, expect, it, vi } from 'vitest';
import { createSessionStore, EXPIRY_STORAGE_KEY, isSessionExpired, SESSION_STORAGE_KEY } from './store';

const KEY = Buffer.alloc(32, 7).toString('base64');

const memoryStorage = () => {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key: string) => items.get(key) ?? null,
    setItem: (key: string, value: string) => void items.set(key, value),
    removeItem: (key: string) => void items.delete(key),
  };
};

const buildSession = (overrides: Partial<Session> = {}): Session => ({
  status: 'success',
  message: 'Login successful',
  expiry: new Date(Date.now() + 3_600_000).toISOString(),
  token: 'secret-token-123',
  email: 'user@lendlock.com',
  userlevel: 'USER',
  loggedin: 'loginValidated',
  permissions: [{ id: 1, permission_name: 'lockDevice' }],
  retailer_phone: '9000000001',
  ...overrides,
});

describe('session store', () => {
  it('stores the session sealed under userSession, the expiry apart, and reads it back in a new store', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const storage = memoryStorage();
    const session = buildSession();
    await createSessionStore({ codec, storage }).save(session);

    const stored = JSON.parse(storage.getItem(SESSION_STORAGE_KEY) ?? 'null');
    expect(isEnvelope(stored)).toBe(true);
    expect(storage.getItem(SESSION_STORAGE_KEY)).not.toContain(session.token);
    expect(await codec.open(stored)).toEqual(session);
    expect(storage.getItem(EXPIRY_STORAGE_KEY)).toBe(session.expiry);

    const reopened = createSessionStore({ codec, storage });
    expect(reopened.get()).toBeNull();
    expect(await reopened.load()).toEqual(session);
    expect(reopened.get()).toEqual(session);
  });

  it('drops a stored session sealed with another key, tampered with, or not a session', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const other = await createWebEnvelopeCodec(Buffer.alloc(32, 9).toString('base64'));
    const values = [
      JSON.stringify(await other.seal(buildSession())),
      JSON.stringify({ ...(await codec.seal(buildSession())), payload: 'AAAA' }),
      JSON.stringify(await codec.seal({ token: 'x' })),
      'not json',
    ];
    for (const value of values) {
      const storage = memoryStorage();
      storage.setItem(SESSION_STORAGE_KEY, value);
      storage.setItem(EXPIRY_STORAGE_KEY, '2099-01-01T00:00:00.000Z');
      const store = createSessionStore({ codec, storage });
      expect(await store.load()).toBeNull();
      expect(storage.items.size).toBe(0);
    }
  });

  it('drops a stored session whose expiry has passed', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const storage = memoryStorage();
    await createSessionStore({ codec, storage }).save(buildSession({ expiry: '2020-01-01T00:00:00.000Z' }));
    expect(await createSessionStore({ codec, storage }).load()).toBeNull();
    expect(storage.items.size).toBe(0);
  });

  it('clear removes both keys and notifies subscribers', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const storage = memoryStorage();
    const store = createSessionStore({ codec, storage });
    const listener = vi.fn();
    store.subscribe(listener);
    await store.save(buildSession());
    expect(listener).toHaveBeenCalledTimes(1);
    store.clear();
    expect(listener).toHaveBeenCalledTimes(2);
    expect(store.get()).toBeNull();
    expect(storage.items.size).toBe(0);
  });

  it('a clear during a pending save wins: the session is not written back', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const storage = memoryStorage();
    const store = createSessionStore({ codec, storage });
    const saving = store.save(buildSession());
    store.clear();
    await saving;
    expect(store.get()).toBeNull();
    expect(storage.items.size).toBe(0);
  });

  it('end forgets the session, notes why and what was not sent, and a sign-in forgets the note', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const storage = memoryStorage();
    const store = createSessionStore({ codec, storage });
    const listener = vi.fn();
    store.subscribe(listener);
    await store.save(buildSession());
    expect(store.ended()).toBeNull();

    store.end({ reason: 'ended_by_admin', notSent: 'Lock to IMEI 356000000000001' });
    expect(store.get()).toBeNull();
    expect(storage.items.size).toBe(0);
    expect(store.ended()).toEqual({ reason: 'ended_by_admin', notSent: 'Lock to IMEI 356000000000001' });
    expect(listener).toHaveBeenCalledTimes(2);

    // The other calls refused with it add nothing and erase nothing; the login page's clear keeps it.
    const noted = store.ended();
    store.end({ reason: null, notSent: null });
    store.clear();
    expect(store.ended()).toBe(noted);

    await store.save(buildSession());
    expect(store.ended()).toBeNull();
  });

  it('a later refusal completes a note that lacked a reason or the command', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const store = createSessionStore({ codec, storage: memoryStorage() });
    await store.save(buildSession());
    const listener = vi.fn();
    store.subscribe(listener);
    store.end({ reason: null });
    store.end({ reason: 'expired', notSent: 'Unlock to IMEI 356000000000002' });
    expect(store.ended()).toEqual({ reason: 'expired', notSent: 'Unlock to IMEI 356000000000002' });
    expect(listener).toHaveBeenCalledTimes(2);
  });

  it('a stored session found expired at start is noted expired; none stored, nothing is noted', async () => {
    const codec = await createWebEnvelopeCodec(KEY);
    const storage = memoryStorage();
    await createSessionStore({ codec, storage }).save(buildSession({ expiry: '2020-01-01T00:00:00.000Z' }));
    const reopened = createSessionStore({ codec, storage });
    await reopened.load();
    expect(reopened.ended()).toEqual({ reason: 'expired', notSent: null });
    const empty = createSessionStore({ codec, storage: memoryStorage() });
    await empty.load();
    expect(empty.ended()).toBeNull();
  });

  it('isSessionExpired is true from the expiry instant on, and for an unreadable expiry', () => {
    const expiry = '2030-01-01T00:00:00.000Z';
    const at = Date.parse(expiry);
    expect(isSessionExpired({ expiry }, at - 1)).toBe(false);
    expect(isSessionExpired({ expiry }, at)).toBe(true);
    expect(isSessionExpired({ expiry: 'soon' }, at)).toBe(true);
  });
});
