/**
 * The request/response envelope (docs/adr/0002-sessions-and-envelope.md): `{payload, transactionId}` where
 * `transactionId` is a random 16-byte id written as hex and used as the AES-256-CBC IV, and `payload` is the
 * base64 ciphertext of the JSON body. It is wire compatibility, not security (TLS and server-side sessions
 * are).
 */
import { z } from 'zod';

export const ENVELOPE_HEADER = 'x-envelope';
export const ENVELOPE_HEADER_VALUE = 'aes-256-cbc';
export const ENVELOPE_KEY_BYTES = 32;
export const ENVELOPE_IV_BYTES = 16;

export const envelopeSchema = z.object({
  payload: z.string().min(1),
  transactionId: z.string().regex(/^[0-9a-fA-F]{32}$/, 'transactionId must be 16 bytes of hex'),
});
export type Envelope = z.infer<typeof envelopeSchema>;

/** True when a parsed JSON body has the shape of an envelope (and nothing else). */
export function isEnvelope(body: unknown): body is Envelope {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  const keys = Object.keys(body);
  return keys.length === 2 && 'payload' in body && 'transactionId' in body;
}

export class EnvelopeError extends Error {
  constructor(message = 'The request envelope could not be decoded.') {
    super(message);
    this.name = 'EnvelopeError';
  }
}

export function hexToBytes(hex: string): Uint8Array<ArrayBuffer> {
  if (!/^(?:[0-9a-fA-F]{2})*$/.test(hex)) throw new EnvelopeError('transactionId is not hex');
  const out = new Uint8Array(hex.length / 2);
  for (let i = 0; i < out.length; i++) out[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return out;
}

export function bytesToHex(bytes: Uint8Array): string {
  let s = '';
  for (const b of bytes) s += b.toString(16).padStart(2, '0');
  return s;
}

export function base64ToBytes(b64: string): Uint8Array<ArrayBuffer> {
  let bin: string;
  try {
    bin = atob(b64);
  } catch {
    throw new EnvelopeError('payload is not base64');
  }
  const out = new Uint8Array(bin.length);
  for (let i = 0; i < bin.length; i++) out[i] = bin.charCodeAt(i);
  return out;
}

export function bytesToBase64(bytes: Uint8Array): string {
  let bin = '';
  const chunk = 0x8000;
  for (let i = 0; i < bytes.length; i += chunk) {
    bin += String.fromCharCode(...bytes.subarray(i, i + chunk));
  }
  return btoa(bin);
}

export function assertKeyLength(key: Uint8Array): void {
  if (key.length !== ENVELOPE_KEY_BYTES) {
    throw new EnvelopeError(`The envelope key must be ${ENVELOPE_KEY_BYTES} bytes, got ${key.length}`);
  }
}
