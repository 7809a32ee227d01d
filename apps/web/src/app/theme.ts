/**
 * The console's Mantine theme, readable at WCAG 2.2 AA. Mantine's default palettes put white text on
 * shades that read at 2–3.6:1 (the primary button at 3.56:1, the Online badge at 2.36:1) and colour text
 * in those same shades (the red notice at 3.28:1). Here every palette but `dark` (the dark scheme's,
 * unused) keeps its light shades 0–5 and has its shades 6–9 darkened, where they need it, until:
 * - text in any of them reads at 4.5:1 on the palette's lightest tint (and so on white): `c="red"`, the
 *   outline and subtle variants, and white text on them (the filled variant: buttons, badges);
 * - shade 9, the light variant's text, reads at 4.5:1 on shades 1 and 2, its background and hover;
 * - each shade is darker than the one before, so a filled button's hover (the next shade) still shows.
 * Dimmed text (gray 6) and placeholders (here gray 6 too) use the darkened gray. Close and clear
 * buttons, which Mantine leaves without a name, are named 'Close' and 'Clear'. Focus rings and the skip
 * link: a11y.css.
 */
import {
  type CSSVariablesResolver,
  createTheme,
  DEFAULT_THEME,
  luminance,
  type MantineColorsTuple,
} from '@mantine/core';
import { LABELS } from '../lib/labels';

/** WCAG 2.2 SC 1.4.3: text reads at 4.5:1 against its background. */
export const MIN_TEXT_CONTRAST = 4.5;
/** What the darkened shades aim for: a little above the minimum, against rounding. */
const TARGET_CONTRAST = 4.6;
/** A darker shade's luminance is at most this share of the one before it. */
const SHADE_STEP = 0.85;

/** The WCAG contrast ratio of two colours (hex), from 1 to 21. */
export function contrastRatio(a: string, b: string): number {
  const [light, dark] = [luminance(a), luminance(b)].sort((x, y) => y - x) as [number, number];
  return (light + 0.05) / (dark + 0.05);
}

/** `hex` with each channel scaled by `1 - amount` (towards black), as `#rrggbb`. */
function darker(hex: string, amount: number): string {
  const channels = [1, 3, 5].map((at) => Number.parseInt(hex.slice(at, at + 2), 16));
  return `#${channels
    .map((c) =>
      Math.round(c * (1 - amount))
        .toString(16)
        .padStart(2, '0'),
    )
    .join('')}`;
}

/** A palette whose shades 6–9 meet the rules above (shades that already do are kept as they are). */
export function accessiblePalette(palette: readonly string[]): MantineColorsTuple {
  const shades = [...palette];
  const tint = shades[0] as string;
  for (let index = 6; index <= 9; index++) {
    const previous = shades[index - 1] as string;
    const backgrounds = index === 9 ? [tint, shades[1] as string, shades[2] as string] : [tint];
    let shade = shades[index] as string;
    const ok = (colour: string) =>
      backgrounds.every((background) => contrastRatio(colour, background) >= TARGET_CONTRAST) &&
      (index === 6 || luminance(colour) <= luminance(previous) * SHADE_STEP);
    while (!ok(shade)) shade = darker(shade, 0.02);
    shades[index] = shade;
  }
  return shades as unknown as MantineColorsTuple;
}

const colors = Object.fromEntries(
  Object.entries(DEFAULT_THEME.colors)
    .filter(([name]) => name !== 'dark')
    .map(([name, palette]) => [name, accessiblePalette(palette)]),
);

export const theme = createTheme({
  primaryColor: 'blue',
  primaryShade: { light: 6, dark: 8 },
  defaultRadius: 'sm',
  colors,
  components: {
    // A modal's and an alert's close button (an icon alone).
    CloseButton: { defaultProps: { 'aria-label': LABELS.close } },
    // A clearable input's clear button (FileInput's, Select's).
    InputClearButton: { defaultProps: { 'aria-label': LABELS.clear } },
  },
});

/** Placeholders in gray 6 like dimmed text (Mantine's gray 5 reads at 2.07:1); gray 6 is darkened above. */
export const cssVariablesResolver: CSSVariablesResolver = () => ({
  variables: {},
  light: { '--mantine-color-placeholder': 'var(--mantine-color-gray-6)' },
  dark: {},
});
