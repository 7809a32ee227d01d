import type { MouseEvent } from 'react';
import { LABELS } from '../../lib/labels';

/** The id of the layout's main region, where 'Skip to main content' moves the focus. */
export const MAIN_CONTENT_ID = 'main-content';

/**
 * WCAG 2.4.1 bypass blocks: the layout's first tab stop, shown when it has the focus (a11y.css). It
 * focuses the main region itself rather than changing the URL's hash, which the router would see.
 */
export function SkipLink() {
  const skip = (event: MouseEvent<HTMLAnchorElement>) => {
    const main = document.getElementById(MAIN_CONTENT_ID);
    if (!main) return;
    event.preventDefault();
    main.focus();
  };
  return (
    <a className="skip-link" href={`#${MAIN_CONTENT_ID}`} onClick={skip} data-testid="skip-link">
      {LABELS.skipToContent}
    </a>
  );
}
