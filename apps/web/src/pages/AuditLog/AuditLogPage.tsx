/**
 * The SUPERADMIN's Audit Log: opens on the last 7 days; search the append-only log by IMEI, user
 * (email), action prefix and From/To dates (whole days in the browser's time zone, which the search sends), see the rows newest
 * first in a 380 px virtualised table paged through the server's total (each row's details as labelled
 * fields), and Export the same search as the
 * server's xlsx, with progress while it streams.
 */
import { localDay, type Screen } from '@lendlock/contract';
import {
  Button,
  Card,
  Center,
  Group,
  Loader,
  Pagination,
  Progress,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import {
  AUDIT_PAGE_SIZE,
  type AuditFilter,
  type AuditPageRequest,
  auditKeys,
  searchAudit,
} from '../../api/audit';
import { browserTimeZone } from '../../api/timeZone';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { textColumns } from '../../components/columns';
import { downloadProgressText } from '../../components/downloadProgress';
import { VirtualTable } from '../../components/VirtualTable';
import {
  type AuditLogFormValues,
  auditFilter,
  EMPTY_AUDIT_LOG_FORM,
  failureMessage,
  openingForm,
  pageCount,
  pageOffset,
  rangeText,
  validate,
} from './auditLogForm';
import { AUDIT_LOG_COLUMNS, auditCells } from './columns';
import { AUDIT_LOG_LABELS as L } from './labels';
import { useAuditExport } from './useAuditExport';

const AUDIT_TABLE_COLUMNS = textColumns(AUDIT_LOG_COLUMNS, auditCells);
/** Result tables scroll at about 350 to 400 px. */
const AUDIT_TABLE_HEIGHT = 380;

export default function AuditLogPage({ screen }: { screen: Screen }) {
  const queryClient = useQueryClient();
  const files = useAuditExport();
  // The screen opens on the last 7 days, already searched.
  const [opening] = useState(() => openingForm(localDay()));
  const [form, setForm] = useState<AuditLogFormValues>(opening);
  const [formError, setFormError] = useState<string | null>(null);
  /** The search shown; `id` tells one Search from the next, so each asks the server afresh. */
  const [submitted, setSubmitted] = useState<{ filter: AuditFilter; id: number } | null>(() => ({
    filter: auditFilter(opening),
    id: 0,
  }));
  const [page, setPage] = useState(1);

  const set = (field: keyof AuditLogFormValues, value: string) => {
    setForm((current) => ({ ...current, [field]: value }));
    setFormError(null);
  };

  /** The form's filter, or null (and its message shown) when validate() refuses it. */
  const checkedFilter = (): AuditFilter | null => {
    const problem = validate(form);
    setFormError(problem);
    return problem ? null : auditFilter(form);
  };

  const search = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const filter = checkedFilter();
    if (!filter) return;
    // Every Search asks the server again (the log grows all the time), from the first page.
    queryClient.removeQueries({ queryKey: auditKeys.all });
    setSubmitted((current) => ({ filter, id: (current?.id ?? 0) + 1 }));
    setPage(1);
  };

  const exportFile = () => {
    const filter = checkedFilter();
    if (filter) void files.start(filter);
  };

  const clear = () => {
    files.stop();
    setForm(EMPTY_AUDIT_LOG_FORM);
    setFormError(null);
    setSubmitted(null);
    setPage(1);
    queryClient.removeQueries({ queryKey: auditKeys.all });
  };

  return (
    <Stack>
      <PageTitle screen={screen} />
      <Card withBorder>
        <Title order={4} mb="sm">
          {L.formTitle}
        </Title>
        <form onSubmit={search} noValidate aria-label={L.formTitle}>
          <Group align="flex-end" wrap="wrap">
            <TextInput
              label={L.imei}
              inputMode="numeric"
              maxLength={20}
              value={form.imei}
              onChange={(event) => set('imei', event.currentTarget.value)}
              w={180}
            />
            <TextInput
              label={L.user}
              maxLength={254}
              value={form.user}
              onChange={(event) => set('user', event.currentTarget.value)}
              w={240}
            />
            <TextInput
              label={L.action}
              placeholder={L.actionPlaceholder}
              maxLength={64}
              value={form.action}
              onChange={(event) => set('action', event.currentTarget.value)}
              w={240}
            />
            <TextInput
              type="date"
              label={L.from}
              value={form.from}
              onChange={(event) => set('from', event.currentTarget.value)}
              w={170}
            />
            <TextInput
              type="date"
              label={L.to}
              value={form.to}
              onChange={(event) => set('to', event.currentTarget.value)}
              w={170}
            />
            <Button type="submit">{L.search}</Button>
            <Button variant="default" onClick={clear}>
              {L.clear}
            </Button>
            <Button variant="light" onClick={exportFile} loading={files.progress !== null}>
              {L.export}
            </Button>
          </Group>
        </form>
        <Text size="xs" c="dimmed" mt="xs">
          {L.datesInZone(browserTimeZone() ?? L.serverZone)}
        </Text>
        {formError ? (
          <Text c="red" size="sm" mt="sm" role="alert" data-testid="audit-form-error">
            {formError}
          </Text>
        ) : null}
        {files.progress ? (
          <Stack gap={4} mt="sm" data-testid="audit-export-progress">
            <Text size="sm">{downloadProgressText(files.progress)}</Text>
            <Progress value={100} animated striped aria-label={L.export} />
          </Stack>
        ) : null}
        {files.error ? (
          <Text c="red" size="sm" mt="sm" role="alert" data-testid="audit-export-error">
            {files.error}
          </Text>
        ) : null}
      </Card>
      {submitted ? (
        <Results key={submitted.id} filter={submitted.filter} page={page} onPage={setPage} />
      ) : null}
    </Stack>
  );
}

function Results({
  filter,
  page,
  onPage,
}: {
  filter: AuditFilter;
  page: number;
  onPage: (page: number) => void;
}) {
  const { api } = useServices();
  const request: AuditPageRequest = {
    ...filter,
    offset: pageOffset(page, AUDIT_PAGE_SIZE),
    limit: AUDIT_PAGE_SIZE,
  };
  const query = useQuery({
    queryKey: auditKeys.search(request),
    queryFn: ({ signal }) => searchAudit(api, request, { signal }),
    retry: false,
    // Another page keeps the rows shown until it arrives.
    placeholderData: keepPreviousData,
  });

  if (query.isPending) {
    return (
      <Center p="md" data-testid="audit-loading">
        <Loader />
      </Center>
    );
  }
  if (query.isError) {
    return (
      <Text c="red" role="alert" data-testid="audit-error">
        {failureMessage(query.error)}
      </Text>
    );
  }

  const { items, total } = query.data;
  const capped = query.data.totalCapped ?? false;
  const loadingPage = query.isPlaceholderData;
  return (
    <Card
      withBorder
      data-testid="audit-results"
      data-offset={request.offset}
      data-state={loadingPage ? 'loading' : 'ready'}
      aria-busy={loadingPage}
    >
      <Group justify="space-between" mb="xs">
        <Title order={4}>{L.results}</Title>
        <Group gap="xs">
          {loadingPage ? <Loader size="xs" /> : null}
          <Text size="sm" c="dimmed" data-testid="audit-count" data-total={total}>
            {loadingPage ? L.rows(total, capped) : rangeText(request.offset, items.length, total, capped)}
          </Text>
        </Group>
      </Group>
      {items.length === 0 ? (
        <Text size="sm" c="dimmed">
          {L.noRows}
        </Text>
      ) : (
        <VirtualTable
          // A new page starts at its top.
          key={request.offset}
          testId="audit-rows"
          label={L.results}
          rows={items}
          columns={AUDIT_TABLE_COLUMNS}
          height={AUDIT_TABLE_HEIGHT}
        />
      )}
      {total > AUDIT_PAGE_SIZE ? (
        <Group justify="flex-end" mt="sm">
          <Pagination
            size="sm"
            total={pageCount(total, AUDIT_PAGE_SIZE)}
            value={page}
            onChange={onPage}
            aria-label={L.results}
          />
        </Group>
      ) : null}
    </Card>
  );
}
