import type { Screen } from '@lendlock/contract';
import { Title } from '@mantine/core';

/**
 * A screen's title as its page's one h1 (one h1 per page, for WCAG 2.2 AA), at the size the pages gave their
 * titles. Sections below it are headings of a lower level.
 */
export function PageTitle({ screen }: { screen: Pick<Screen, 'title'> }) {
  return (
    <Title order={1} size="h2">
      {screen.title}
    </Title>
  );
}
