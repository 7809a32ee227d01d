import { describe, expect, it } from 'vitest';
import { readStyleNonce } from './cspNonce';

const docWith = (content: string | null) => ({
  querySelector: (selector: string) =>
    selector === 'meta[name="csp-nonce"]' && content !== null
      ? ({ getAttribute: (name: string) => (name === 'content' ? content : null) } as unknown as Element)
      : null,
});

describe('readStyleNonce', () => {
  it('returns the nonce the server wrote into the meta tag', () => {
    expect(readStyleNonce(docWith('r4nd0m=='))).toBe('r4nd0m==');
  });

  it('ignores the unreplaced placeholder (vite dev), an empty value and a missing tag', () => {
    expect(readStyleNonce(docWith('__CSP_NONCE__'))).toBeUndefined();
    expect(readStyleNonce(docWith(''))).toBeUndefined();
    expect(readStyleNonce(docWith(null))).toBeUndefined();
  });
});
