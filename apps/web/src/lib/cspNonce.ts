/** The placeholder the server replaces with the per-request nonce; still there under `vite dev`. */
export const CSP_NONCE_PLACEHOLDER = '__CSP_NONCE__';

/**
 * The CSP nonce for `<style>` tags (the server's policy is `style-src 'self' 'nonce-…'`), read from
 * `<meta name="csp-nonce">`. Undefined when absent or still the placeholder.
 */
export function readStyleNonce(doc: Pick<Document, 'querySelector'>): string | undefined {
  const content = doc.querySelector('meta[name="csp-nonce"]')?.getAttribute('content')?.trim();
  return content && content !== CSP_NONCE_PLACEHOLDER ? content : undefined;
}
