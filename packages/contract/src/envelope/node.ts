/** node:crypto implementation of the envelope, used by the server (synchronous and fast). */
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import {
  assertKeyLength,
  ENVELOPE_IV_BYTES,
  type Envelope,
  EnvelopeError,
  envelopeSchema,
  hexToBytes,
} from './codec';

export interface NodeEnvelopeCodec {
  seal(value: unknown): Envelope;
  open<T = unknown>(envelope: unknown): T;
}

export function createNodeEnvelopeCodec(key: Uint8Array | string): NodeEnvelopeCodec {
  const keyBytes = typeof key === 'string' ? Buffer.from(key, 'base64') : Buffer.from(key);
  assertKeyLength(keyBytes);
  return {
    seal(value) {
      const iv = randomBytes(ENVELOPE_IV_BYTES);
      const cipher = createCipheriv('aes-256-cbc', keyBytes, iv);
      const body = Buffer.concat([cipher.update(JSON.stringify(value ?? null), 'utf8'), cipher.final()]);
      return { payload: body.toString('base64'), transactionId: iv.toString('hex') };
    },
    open<T>(envelope: unknown): T {
      const parsed = envelopeSchema.safeParse(envelope);
      if (!parsed.success) throw new EnvelopeError();
      let text: string;
      try {
        const decipher = createDecipheriv('aes-256-cbc', keyBytes, hexToBytes(parsed.data.transactionId));
        text = Buffer.concat([decipher.update(parsed.data.payload, 'base64'), decipher.final()]).toString(
          'utf8',
        );
      } catch {
        throw new EnvelopeError();
      }
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new EnvelopeError('The envelope does not hold JSON.');
      }
    },
  };
}
