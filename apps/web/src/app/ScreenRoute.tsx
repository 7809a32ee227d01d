import type { Screen } from '@lendlock/contract';
import { useDocumentTitle } from '@mantine/hooks';
import { pageFor } from '../features/screens/screenPages';
import { Guard } from './Guard';
import { useServices } from './services';

/** One child route of the layout: the screen behind its guard, with the document title set. */
export function ScreenRoute({ screen, superadmin }: { screen: Screen; superadmin: boolean }) {
  const { config } = useServices();
  useDocumentTitle(`${screen.title} · ${config.productLabel}`);
  const Page = pageFor(screen);
  return (
    <Guard screen={screen} superadmin={superadmin}>
      <Page screen={screen} />
    </Guard>
  );
}
