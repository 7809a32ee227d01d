/**
 * Collections (/collections, /superadmin/collections; ADMIN and SUPERADMIN; not a screen of
 * the spec): Today's Plan with the kill switch and the recent runs, the policy with its dry run and
 * version history, the release approval queue, and the held devices. The tab is in the URL (?tab=), so
 * a tab can be linked to and survives a reload.
 */
import type { Screen } from '@lendlock/contract';
import { Stack, Tabs, Title } from '@mantine/core';
import { useSearchParams } from 'react-router';
import { HoldsTab } from './HoldsTab';
import { COLLECTIONS_LABELS as L } from './labels';
import { PolicyTab } from './PolicyTab';
import { ReleasesTab } from './ReleasesTab';
import { TodayPlanTab } from './TodayPlanTab';

const TABS = ['plan', 'policy', 'releases', 'holds'] as const;
type Tab = (typeof TABS)[number];

const isTab = (value: string | null): value is Tab => TABS.includes(value as Tab);

export default function CollectionsPage({ screen }: { screen: Screen }) {
  const [params, setParams] = useSearchParams();
  const asked = params.get('tab');
  const tab: Tab = isTab(asked) ? asked : 'plan';

  return (
    <Stack gap="md">
      <Title order={1} size="h2">
        {screen.title}
      </Title>
      <Tabs
        value={tab}
        onChange={(value) => {
          if (isTab(value)) setParams(value === 'plan' ? {} : { tab: value }, { replace: true });
        }}
        keepMounted={false}
      >
        <Tabs.List>
          {TABS.map((name) => (
            <Tabs.Tab key={name} value={name} data-testid={`collections-tab-${name}`}>
              {L.tabs[name]}
            </Tabs.Tab>
          ))}
        </Tabs.List>
        <Tabs.Panel value="plan" pt="md">
          <TodayPlanTab />
        </Tabs.Panel>
        <Tabs.Panel value="policy" pt="md">
          <PolicyTab />
        </Tabs.Panel>
        <Tabs.Panel value="releases" pt="md">
          <ReleasesTab />
        </Tabs.Panel>
        <Tabs.Panel value="holds" pt="md">
          <HoldsTab />
        </Tabs.Panel>
      </Tabs>
    </Stack>
  );
}
