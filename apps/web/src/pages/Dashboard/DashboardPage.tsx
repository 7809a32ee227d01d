/**
 * Dashboard (/ and /superadmin): Total Devices, De-Enrolled Devices (re-registration required) and
 * Today's Registration; the sample CSV downloads; Refresh Data; and charts of registrations per day,
 * commands by status and devices online.
 */
import { localDay, MESSAGES, notificationSampleCsv, type Screen } from '@lendlock/contract';
import {
  Anchor,
  Button,
  Card,
  Center,
  Group,
  Loader,
  Progress,
  RingProgress,
  SimpleGrid,
  Stack,
  Text,
} from '@mantine/core';
import { type UseQueryResult, useQuery } from '@tanstack/react-query';
import { deviceKeys, fetchDashboardCharts, fetchHomeData } from '../../api/devices';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { statusColor } from '../../components/commandStatus';
import { downloadBlob } from '../../features/csv/download';
import { BarChart } from './BarChart';
import { DASHBOARD_LABELS as L, SAMPLE_FILES } from './labels';

export default function DashboardPage({ screen }: { screen: Screen }) {
  const { api } = useServices();
  const home = useQuery({
    queryKey: deviceKeys.homeData(),
    queryFn: ({ signal }) => fetchHomeData(api, { signal }),
  });
  const charts = useQuery({
    queryKey: deviceKeys.dashboardCharts(),
    queryFn: ({ signal }) => fetchDashboardCharts(api, { signal }),
  });
  const refreshing = home.isFetching || charts.isFetching;
  const refresh = () => Promise.all([home.refetch(), charts.refetch()]);

  const header = (
    <Group justify="space-between">
      <PageTitle screen={screen} />
      <Group>
        <Anchor href={`/${SAMPLE_FILES.imei}`} download={SAMPLE_FILES.imei}>
          {L.sampleCsv}
        </Anchor>
        <Anchor
          href={`/${SAMPLE_FILES.notification}`}
          download={SAMPLE_FILES.notification}
          onClick={(event) => {
            // Dated on the browser's day, as the batch screens judge it.
            event.preventDefault();
            downloadBlob(
              new Blob([notificationSampleCsv(localDay())], { type: 'text/csv' }),
              SAMPLE_FILES.notification,
            );
          }}
        >
          {L.notificationSampleCsv}
        </Anchor>
        <Button onClick={refresh} loading={refreshing}>
          {L.refresh}
        </Button>
      </Group>
    </Group>
  );

  if (home.isPending) {
    return (
      <Stack>
        {header}
        <Center p="xl">
          <Loader />
        </Center>
      </Stack>
    );
  }
  if (home.isError) {
    return (
      <Stack>
        {header}
        <Text c="red">{MESSAGES.cannotFetch}</Text>
      </Stack>
    );
  }
  const counts = [
    { label: L.totalDevices, value: home.data.total_device, testId: 'total-devices' },
    { label: L.deenrolled, value: home.data.deenroll, testId: 'deenrolled-devices' },
    { label: L.todaysRegistration, value: home.data.device_today, testId: 'todays-registration' },
  ];
  return (
    <Stack>
      {header}
      <SimpleGrid cols={{ base: 1, sm: 3 }}>
        {counts.map((count) => (
          <Card key={count.testId} withBorder>
            <Text c="dimmed" size="sm">
              {count.label}
            </Text>
            <Text fz={32} fw={700} data-testid={count.testId}>
              {count.value}
            </Text>
          </Card>
        ))}
      </SimpleGrid>
      <Charts query={charts} />
    </Stack>
  );
}

function Charts({ query }: { query: UseQueryResult<Awaited<ReturnType<typeof fetchDashboardCharts>>> }) {
  if (query.isPending) {
    return (
      <Center p="md">
        <Loader size="sm" />
      </Center>
    );
  }
  if (query.isError) return <Text c="red">{MESSAGES.cannotFetch}</Text>;
  const { registrationsPerDay, commandsByStatus, devicesOnline, devicesTotal } = query.data;
  const maxStatus = Math.max(1, ...commandsByStatus.map((s) => s.count));
  const onlineShare = devicesTotal === 0 ? 0 : (devicesOnline / devicesTotal) * 100;
  return (
    <SimpleGrid cols={{ base: 1, lg: 3 }}>
      <Card withBorder>
        <Text fw={500} mb="xs">
          {L.registrationsPerDay}
        </Text>
        <BarChart
          label={L.registrationsPerDay}
          data={registrationsPerDay.map((d) => ({ label: d.day.slice(5), value: d.count }))}
        />
      </Card>
      <Card withBorder data-testid="commands-by-status">
        <Text fw={500} mb="xs">
          {L.commandsByStatus}
        </Text>
        {commandsByStatus.length === 0 ? (
          <Text c="dimmed" size="sm">
            {L.noCommands}
          </Text>
        ) : (
          <Stack gap={6}>
            {commandsByStatus.map((s) => (
              <div key={s.status}>
                <Group justify="space-between" gap="xs">
                  <Text size="sm">{s.status}</Text>
                  <Text size="sm" fw={500}>
                    {s.count}
                  </Text>
                </Group>
                <Progress
                  value={(s.count / maxStatus) * 100}
                  color={statusColor(s.status)}
                  size="sm"
                  aria-label={`${s.status}: ${s.count}`}
                />
              </div>
            ))}
          </Stack>
        )}
      </Card>
      <Card withBorder>
        <Text fw={500} mb="xs">
          {L.devicesOnline}
        </Text>
        <Center>
          <RingProgress
            size={140}
            thickness={14}
            sections={[{ value: onlineShare, color: 'green' }]}
            label={
              <Text ta="center" fw={700} data-testid="devices-online">
                {`${devicesOnline}/${devicesTotal}`}
              </Text>
            }
          />
        </Center>
        <Text ta="center" size="sm" c="dimmed">
          {L.onlineOf(devicesOnline, devicesTotal)}
        </Text>
      </Card>
    </SimpleGrid>
  );
}
