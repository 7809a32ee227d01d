import type { Screen } from '@lendlock/contract';
import { PageTitle } from '../../app/layout/PageTitle';

/** Stand-in for a screen whose page is not built yet: its title from the screen table. */
export default function ScreenTitlePage({ screen }: { screen: Screen }) {
  return <PageTitle screen={screen} />;
}
