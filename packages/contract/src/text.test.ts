import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TEXT_MESSAGES, unstorableText, unstorableTextProblem } from './text';

describe('text the database cannot store', () => {
  it('finds NUL characters and lone surrogates, and passes everything else', () => {
    expect(unstorableText('a\u0000b')).toBe('nul');
    expect(unstorableText('\uD800')).toBe('surrogate');
    expect(unstorableText('a\uDC00')).toBe('surrogate');
    expect(unstorableText('\uDBFF\uDFFF\uD800')).toBe('surrogate');
    expect(unstorableText('😀 ₹ नमस्ते \u0001 \uFFFF')).toBeNull();
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (text) => {
        expect(unstorableText(text)).toBeNull();
      }),
    );
  });

  it('names the field that holds one, nested or not, and the object whose key holds one', () => {
    expect(unstorableTextProblem({ email: 'a@b', password: 'x\u0000' })).toBe(TEXT_MESSAGES.nul('password'));
    expect(unstorableTextProblem({ imeis: ['356938035643809', '\uD800'] })).toBe(
      TEXT_MESSAGES.surrogate('imeis.1'),
    );
    expect(unstorableTextProblem({ a: { 'b\u0000': 1 } })).toBe(TEXT_MESSAGES.nul('a'));
    expect(unstorableTextProblem('\u0000')).toBe('Invalid body: must not contain NUL characters');
    expect(unstorableTextProblem({ file: 'x\u0000' }, 'params')).toBe(TEXT_MESSAGES.nul('file'));
    expect(unstorableTextProblem({ ok: ['fine', 1, null, true, { deep: 'fine' }] })).toBeNull();
  });

  it('shortens a hostile field path, and walks a deeply nested body without overflowing', () => {
    const message = unstorableTextProblem({ [`k${'x'.repeat(5000)}`]: '\u0000' }) ?? '';
    expect(message.length).toBeLessThan(150);
    let deep: unknown = '\u0000';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    expect(unstorableTextProblem(deep)).toMatch(/^Invalid 0\.0\.0.*…: must not contain NUL characters$/);
  });
});
