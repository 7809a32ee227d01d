/**
 * Device Version Detail: S.No., App Version, No. of Device. Failure 'Cannot fetch the data now,
 * please try again'; no session 'User session not found'; an empty list 'No results found'.
 */
import { MESSAGES, type Screen } from '@lendlock/contract';
import { Center, Loader, ScrollArea, Stack, Table, Text } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { deviceKeys, fetchAppVersions } from '../../api/devices';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { DEVICE_LABELS as L } from '../../features/devices/labels';

export default function AppVersionPage({ screen }: { screen: Screen }) {
  return (
    <Stack>
      <PageTitle screen={screen} />
      <AppVersions />
    </Stack>
  );
}

function AppVersions() {
  const { api } = useServices();
  const session = useSession();
  const versions = useQuery({
    queryKey: deviceKeys.appVersions(),
    queryFn: ({ signal }) => fetchAppVersions(api, { signal }),
    enabled: session !== null,
  });
  if (session === null) return <Text c="red">{MESSAGES.userSessionNotFound}</Text>;
  if (versions.isPending) {
    return (
      <Center p="md">
        <Loader />
      </Center>
    );
  }
  if (versions.isError) return <Text c="red">{MESSAGES.cannotFetch}</Text>;
  if (versions.data.items.length === 0) return <Text>{MESSAGES.noResults}</Text>;
  return (
    <ScrollArea.Autosize mah={400} type="auto" maw={640}>
      <Table striped withTableBorder stickyHeader data-testid="app-versions">
        <Table.Thead>
          <Table.Tr>
            <Table.Th>{L.sno}</Table.Th>
            <Table.Th>{L.appVersion}</Table.Th>
            <Table.Th>{L.noOfDevice}</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {versions.data.items.map((item, index) => (
            <Table.Tr key={item.appversion}>
              <Table.Td>{index + 1}</Table.Td>
              <Table.Td>{item.appversion}</Table.Td>
              <Table.Td>{item.devices}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
    </ScrollArea.Autosize>
  );
}
