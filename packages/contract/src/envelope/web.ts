/** WebCrypto implementation of the envelope, used by the console (and usable in Node 20+). */
import {
  assertKeyLength,
  base64ToBytes,
  bytesToBase64,
  bytesToHex,
  ENVELOPE_IV_BYTES,
  type Envelope,
  EnvelopeError,
  envelopeSchema,
  hexToBytes,
} from './codec';

export interface WebEnvelopeCodec {
  seal(value: unknown): Promise<Envelope>;
  open<T = unknown>(envelope: unknown): Promise<T>;
}

export async function createWebEnvelopeCodec(keyBase64: string): Promise<WebEnvelopeCodec> {
  const raw = base64ToBytes(keyBase64);
  assertKeyLength(raw);
  const key = await crypto.subtle.importKey('raw', raw, { name: 'AES-CBC' }, false, ['encrypt', 'decrypt']);
  return {
    async seal(value) {
      const iv = crypto.getRandomValues(new Uint8Array(ENVELOPE_IV_BYTES));
      const plain = new TextEncoder().encode(JSON.stringify(value ?? null));
      const cipher = await crypto.subtle.encrypt({ name: 'AES-CBC', iv }, key, plain);
      return { payload: bytesToBase64(new Uint8Array(cipher)), transactionId: bytesToHex(iv) };
    },
    async open<T>(envelope: unknown) {
      const parsed = envelopeSchema.safeParse(envelope);
      if (!parsed.success) throw new EnvelopeError();
      let plain: ArrayBuffer;
      try {
        plain = await crypto.subtle.decrypt(
          { name: 'AES-CBC', iv: hexToBytes(parsed.data.transactionId) },
          key,
          base64ToBytes(parsed.data.payload),
        );
      } catch {
        throw new EnvelopeError();
      }
      try {
        return JSON.parse(new TextDecoder().decode(plain)) as T;
      } catch {
        throw new EnvelopeError('The envelope does not hold JSON.');
      }
    },
  };
}
