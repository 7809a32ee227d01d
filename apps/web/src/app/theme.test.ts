/**
 * The theme's colours read at WCAG 2.2 AA (4.5:1 for text) where the console puts text in
 * them or on them: white on every filled shade (the primary button, the Online badge), every palette's
 * text shade on white and on its lightest tint (the red notice), the light variant's text on its
 * background and hover; and each shade is darker than the one before (a filled button's hover shows).
 */
import { DEFAULT_THEME, luminance } from '@mantine/core';
import { describe, expect, it } from 'vitest';
import { accessiblePalette, contrastRatio, MIN_TEXT_CONTRAST, theme } from './theme';

const WHITE = '#ffffff';
const palettes = Object.entries(theme.colors ?? {}) as [string, readonly string[]][];
const shadeOf = (name: string, shade: number) =>
  (theme.colors?.[name] as readonly string[] | undefined)?.[shade] as string;

describe('the theme colours', () => {
  it('covers every Mantine palette but the dark scheme one, on primary shade 6', () => {
    expect(palettes.map(([name]) => name).sort()).toEqual(
      Object.keys(DEFAULT_THEME.colors)
        .filter((name) => name !== 'dark')
        .sort(),
    );
    expect(theme.primaryShade).toEqual({ light: 6, dark: 8 });
  });

  it('measures Mantine defaults at their known ratios (so the check itself is right)', () => {
    expect(contrastRatio(DEFAULT_THEME.colors.red[6], WHITE)).toBeCloseTo(3.28, 2);
    expect(contrastRatio(DEFAULT_THEME.colors.blue[6], WHITE)).toBeCloseTo(3.56, 2);
    expect(contrastRatio(DEFAULT_THEME.colors.green[6], WHITE)).toBeCloseTo(2.36, 2);
  });

  it.each(palettes)('%s reads at 4.5:1 in every use', (_name, shades) => {
    for (let shade = 6; shade <= 9; shade++) {
      const colour = shades[shade] as string;
      expect(contrastRatio(colour, WHITE)).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
      expect(contrastRatio(colour, shades[0] as string)).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
      expect(luminance(colour)).toBeLessThan(luminance(shades[shade - 1] as string));
    }
    for (const background of [shades[1], shades[2]] as string[]) {
      expect(contrastRatio(shades[9] as string, background)).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    }
    // The light shades, the variants' backgrounds, are Mantine's own.
    expect(shades.slice(0, 6)).toEqual(DEFAULT_THEME.colors[_name as 'red']?.slice(0, 6));
  });

  it('fixes the three colours that read below 4.5:1: red text, blue and green fills', () => {
    expect(contrastRatio(shadeOf('red', 6), WHITE)).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    expect(contrastRatio(WHITE, shadeOf('blue', 6))).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
    expect(contrastRatio(WHITE, shadeOf('green', 6))).toBeGreaterThanOrEqual(MIN_TEXT_CONTRAST);
  });

  it('keeps a shade that already reads well', () => {
    const gray = [...DEFAULT_THEME.colors.gray];
    expect(accessiblePalette(gray)[7]).toBe(gray[7]);
    expect(accessiblePalette(gray)[6]).not.toBe(gray[6]);
  });
});
