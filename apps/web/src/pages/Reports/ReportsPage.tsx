/**
 * Reports / Bulk Upload History Details: a tab per report, the Download reports form (StartDate,
 * EndDate, and the registration filter on the Registrations tab), Submit (loads the tables), Cancel
 * (clears the form and the results), Download (the server's streamed xlsx of the tab, and on a command
 * tab its executed commands too, with progress while it streams) and View (shows or hides the tables).
 * A tab changed while results are shown loads the same range for the new tab.
 */
import {
  REGISTRATION_FILTERS,
  REPORT_TABS,
  type RegistrationFilter,
  type ReportTab,
  type Screen,
} from '@lendlock/contract';
import {
  Button,
  Card,
  Center,
  Group,
  Loader,
  NativeSelect,
  Progress,
  Stack,
  Tabs,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { type UseQueryResult, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useEffect, useRef, useState } from 'react';
import {
  fetchReport,
  type Report,
  type ReportLoadProgress,
  type ReportQuery,
  reportKeys,
} from '../../api/reports';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { downloadProgressText } from '../../components/downloadProgress';
import { REPORT_LABELS as L } from './labels';
import { ReportResults } from './ReportResults';
import {
  EMPTY_REPORT_FORM,
  exportParts,
  FIRST_TAB,
  failureMessage,
  type ReportFormValues,
  reportQuery,
  sameQuery,
  tabOf,
  validate,
} from './reportForm';
import { useReportFiles } from './useReportFiles';

const FILTER_OPTIONS = [
  { value: '', label: L.selectFilter },
  ...REGISTRATION_FILTERS.map((f) => ({ value: f.value, label: f.label })),
];

export default function ReportsPage({ screen }: { screen: Screen }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const files = useReportFiles();
  const [tab, setTab] = useState(FIRST_TAB);
  const [form, setForm] = useState<ReportFormValues>(EMPTY_REPORT_FORM);
  const [formError, setFormError] = useState<string | null>(null);
  const [submitted, setSubmitted] = useState<ReportQuery | null>(null);
  const [visible, setVisible] = useState(true);
  const [loading, setLoading] = useState<ReportLoadProgress | null>(null);

  const report = useQuery({
    queryKey: submitted ? reportKeys.report(submitted) : [...reportKeys.all, 'none'],
    queryFn: ({ signal }) => {
      if (!submitted) throw new Error('no report asked for');
      setLoading(null);
      return fetchReport(api, submitted, { signal, onProgress: setLoading });
    },
    enabled: submitted !== null,
    retry: false,
    // A report is what Submit asked for; only Submit asks again.
    staleTime: Number.POSITIVE_INFINITY,
    gcTime: 60_000,
  });

  // The server's message, or 'Something went wrong.Please try again in sometime', is alerted,
  // once per failure (not again when a tab that failed before is shown while it is asked again).
  const alertedAt = useRef(0);
  useEffect(() => {
    if (!report.error || report.errorUpdatedAt <= alertedAt.current) return;
    alertedAt.current = report.errorUpdatedAt;
    window.alert(failureMessage(report.error));
  }, [report.error, report.errorUpdatedAt]);

  const set = (field: keyof ReportFormValues, value: string) => {
    setForm((current) => ({ ...current, [field]: value }));
    setFormError(null);
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const problem = validate(tab, form);
    setFormError(problem);
    if (problem) return;
    const query = reportQuery(tab, form);
    setVisible(true);
    if (sameQuery(query, submitted)) void report.refetch();
    else setSubmitted(query);
  };

  const selectTab = (value: string | null) => {
    if (!value || value === tab.report) return;
    const next = tabOf(value);
    setTab(next);
    setFormError(null);
    if (submitted) setSubmitted(validate(next, form) ? null : reportQuery(next, form));
  };

  const cancel = () => {
    files.stop();
    setForm(EMPTY_REPORT_FORM);
    setFormError(null);
    setSubmitted(null);
    setLoading(null);
    void queryClient.cancelQueries({ queryKey: reportKeys.all });
    queryClient.removeQueries({ queryKey: reportKeys.all });
  };

  const download = () => {
    const problem = validate(tab, form);
    setFormError(problem);
    if (problem) return;
    void files.exportParts(reportQuery(tab, form), exportParts(tab));
  };

  return (
    <Stack>
      <PageTitle screen={screen} />
      <Tabs value={tab.report} onChange={selectTab}>
        <Tabs.List>
          {REPORT_TABS.map((t) => (
            <Tabs.Tab key={t.report} value={t.report}>
              {t.label}
            </Tabs.Tab>
          ))}
        </Tabs.List>
      </Tabs>
      <Card withBorder>
        <Title order={4} mb="sm">
          {L.formTitle}
        </Title>
        <form onSubmit={submit} noValidate aria-label={L.formTitle}>
          <Group align="flex-end" wrap="wrap">
            <TextInput
              type="date"
              label={L.startDate}
              required
              value={form.startdate}
              onChange={(event) => set('startdate', event.currentTarget.value)}
              w={180}
            />
            <TextInput
              type="date"
              label={L.endDate}
              required
              value={form.enddate}
              onChange={(event) => set('enddate', event.currentTarget.value)}
              w={180}
            />
            {tab.kind === 'registration' ? (
              <NativeSelect
                label={L.filter}
                required
                data={FILTER_OPTIONS}
                value={form.match}
                onChange={(event) => set('match', event.currentTarget.value as RegistrationFilter | '')}
                w={180}
              />
            ) : null}
            <Button type="submit">{L.submit}</Button>
            <Button variant="default" onClick={cancel}>
              {L.cancel}
            </Button>
            <Button variant="light" onClick={download} loading={files.progress !== null}>
              {L.download}
            </Button>
            <Button
              variant="default"
              onClick={() => setVisible((shown) => !shown)}
              disabled={submitted === null}
              aria-pressed={submitted !== null && visible}
            >
              {L.view}
            </Button>
          </Group>
        </form>
        {formError ? (
          <Text c="red" size="sm" mt="sm" role="alert" data-testid="report-form-error">
            {formError}
          </Text>
        ) : null}
        {files.progress ? (
          <Stack gap={4} mt="sm" data-testid="export-progress">
            <Text size="sm">{downloadProgressText(files.progress)}</Text>
            <Progress value={100} animated striped aria-label={L.download} />
          </Stack>
        ) : null}
      </Card>
      {submitted && visible ? (
        <Results
          query={report}
          loading={loading}
          tab={tabOf(submitted.report)}
          onOpenUpload={files.openUpload}
          removedUploads={files.removedUploads}
        />
      ) : null}
    </Stack>
  );
}

function Results({
  query,
  loading,
  tab,
  onOpenUpload,
  removedUploads,
}: {
  query: UseQueryResult<Report>;
  loading: ReportLoadProgress | null;
  tab: ReportTab;
  onOpenUpload: (path: string) => void;
  removedUploads: Readonly<Record<string, string>>;
}) {
  if (query.isPending || query.isFetching) {
    return (
      <Center p="md">
        <Stack align="center" gap="xs" data-testid="report-loading">
          <Loader />
          {loading ? <Text size="sm">{L.loading(loading.loaded, loading.total)}</Text> : null}
        </Stack>
      </Center>
    );
  }
  if (query.isError) {
    return (
      <Text c="red" data-testid="report-error">
        {failureMessage(query.error)}
      </Text>
    );
  }
  return (
    <div data-testid="report-results" data-report={tab.report}>
      <ReportResults
        report={query.data}
        title={tab.label}
        onOpenUpload={(path) => void onOpenUpload(path)}
        removedUploads={removedUploads}
      />
    </div>
  );
}
