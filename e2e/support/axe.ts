/** axe-core over a console page: what a WCAG 2.2 AA audit finds there, one line per problem. */
import AxeBuilder from '@axe-core/playwright';
import type { Page } from 'playwright-core';

/** WCAG 2.0, 2.1 and 2.2, levels A and AA. */
const AXE_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa'];

/**
 * The serious and critical violations axe finds on the page as it stands, one line each (none: []).
 * Mantine fades dialogs and menus in: axe judges the colours they end with, not a frame of the fade (a
 * Submit label half-faded in measured 3.86:1 once), so it waits for the animations that end.
 */
export async function axeViolations(page: Page, where: string): Promise<string[]> {
  await page.waitForFunction(() =>
    document
      .getAnimations()
      .every(
        (a) =>
          a.playState !== 'running' || a.effect?.getComputedTiming().iterations === Number.POSITIVE_INFINITY,
      ),
  );
  const { violations } = await new AxeBuilder({ page }).withTags(AXE_TAGS).analyze();
  return violations
    .filter((violation) => violation.impact === 'serious' || violation.impact === 'critical')
    .flatMap((violation) =>
      violation.nodes.map(
        (node) =>
          `${where}: ${violation.id} (${violation.impact}) ${node.target.join(' ')}: ${node.failureSummary ?? violation.help}`,
      ),
    );
}
