import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { EnvelopeError, isEnvelope } from './codec';
import { createNodeEnvelopeCodec } from './node';
import { createWebEnvelopeCodec } from './web';

const key = randomBytes(32).toString('base64');
const body = { email: 'ops@lendlock.com', password: 'pässwörd ✓', list: [1, 2, 3], nested: { a: null } };

describe('envelope', () => {
  it('a body sealed in Node opens in the browser implementation (WebCrypto)', async () => {
    const sealed = createNodeEnvelopeCodec(key).seal(body);
    expect(sealed.transactionId).toMatch(/^[0-9a-f]{32}$/);
    expect(sealed.payload).not.toContain('ops@lendlock.com');
    expect(await (await createWebEnvelopeCodec(key)).open(sealed)).toEqual(body);
  });

  it('a body sealed in the browser implementation opens in Node', async () => {
    const sealed = await (await createWebEnvelopeCodec(key)).seal(body);
    expect(createNodeEnvelopeCodec(key).open(sealed)).toEqual(body);
  });

  it('uses a fresh random transactionId (the IV) for every call', () => {
    const codec = createNodeEnvelopeCodec(key);
    const a = codec.seal(body);
    const b = codec.seal(body);
    expect(a.transactionId).not.toBe(b.transactionId);
    expect(a.payload).not.toBe(b.payload);
  });

  it('refuses a payload sealed with another key, a bad IV or a non-envelope', async () => {
    const sealed = createNodeEnvelopeCodec(key).seal(body);
    const other = createNodeEnvelopeCodec(randomBytes(32));
    expect(() => other.open(sealed)).toThrow(EnvelopeError);
    expect(() => createNodeEnvelopeCodec(key).open({ ...sealed, transactionId: 'zz' })).toThrow(
      EnvelopeError,
    );
    expect(() =>
      createNodeEnvelopeCodec(key).open({ payload: '%%%', transactionId: sealed.transactionId }),
    ).toThrow(EnvelopeError);
    await expect((await createWebEnvelopeCodec(key)).open({ nope: 1 })).rejects.toThrow(EnvelopeError);
  });

  it('refuses a key that is not 32 bytes', async () => {
    expect(() => createNodeEnvelopeCodec(randomBytes(16))).toThrow(/32 bytes/);
    await expect(createWebEnvelopeCodec(randomBytes(24).toString('base64'))).rejects.toThrow(/32 bytes/);
  });

  it('recognises an envelope only by its exact shape', () => {
    expect(isEnvelope({ payload: 'x', transactionId: 'y' })).toBe(true);
    expect(isEnvelope({ payload: 'x', transactionId: 'y', email: 'z' })).toBe(false);
    expect(isEnvelope({ email: 'z' })).toBe(false);
    expect(isEnvelope(null)).toBe(false);
  });
});
