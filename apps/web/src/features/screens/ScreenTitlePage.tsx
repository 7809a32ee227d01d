import type { Screen } from '@lendlock/contract';
import { Title } from '@mantine/core';

/** Stand-in for a screen whose page is not built yet: its title from the screen table. */
export default function ScreenTitlePage({ screen }: { screen: Screen }) {
  return <Title order={2}>{screen.title}</Title>;
}
