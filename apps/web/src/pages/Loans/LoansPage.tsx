/**
 * Loans (/loans, /superadmin/loans; ADMIN and SUPERADMIN; not a screen of the spec, docs/features.md
 * § Loans and payments): import a loans CSV and record a payments CSV the way the batch screens take a
 * file (read and checked in the browser first, its errors listed with incorrect_data.csv; then sent,
 * and the server's refusal shown the same way: nothing is imported or recorded from a file with a bad
 * row), record one payment, and find a loan by IMEI or loan reference.
 */
import {
  type ImportLoansResponse,
  type InvalidRow,
  localDay,
  MESSAGES,
  type RecordPaymentsResponse,
  type Screen,
  validateLoansCsv,
  validatePaymentsCsv,
} from '@lendlock/contract';
import {
  Alert,
  Anchor,
  Button,
  Card,
  Checkbox,
  Grid,
  Group,
  Stack,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQuery } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { refusalMessage, refusedRows } from '../../api/client';
import { fetchLoan, loanKeys, uploadLoans, uploadPayments } from '../../api/loans';
import { PageTitle } from '../../app/layout/PageTitle';
import { useServices } from '../../app/services';
import { downloadText } from '../../features/csv/download';
import { type CsvSummary, CsvUpload } from '../../features/csv/ImeiCsvUpload';
import { LoanDetails } from '../../features/loans/LoanDetails';
import { LOAN_LABELS as L } from '../../features/loans/labels';
import { lookupOf, sampleLoansCsv, samplePaymentsCsv } from '../../features/loans/loanView';
import { RecordPaymentForm } from '../../features/loans/RecordPaymentForm';

export default function LoansPage({ screen }: { screen: Screen }) {
  return (
    <Stack gap="md">
      <PageTitle screen={screen} />
      <Grid>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <FileCard
            kind="loans"
            title={L.importTitle}
            help={L.importHelp}
            sample={{
              label: L.sampleLoans,
              name: 'loans_sample.csv',
              text: () => sampleLoansCsv(localDay()),
            }}
          />
        </Grid.Col>
        <Grid.Col span={{ base: 12, lg: 6 }}>
          <FileCard
            kind="payments"
            title={L.paymentsTitle}
            help={L.paymentsHelp}
            sample={{
              label: L.samplePayments,
              name: 'payments_sample.csv',
              text: () => samplePaymentsCsv(localDay()),
            }}
          />
        </Grid.Col>
      </Grid>
      <Card withBorder>
        <Title order={4} mb="sm">
          {L.paymentTitle}
        </Title>
        <RecordPaymentForm />
      </Card>
      <FindLoan />
    </Stack>
  );
}

type Sent = ImportLoansResponse | RecordPaymentsResponse;

function FileCard(props: {
  kind: 'loans' | 'payments';
  title: string;
  help: string;
  sample: { label: string; name: string; text: () => string };
}) {
  const { api } = useServices();
  const [file, setFile] = useState<File | null>(null);
  const [replace, setReplace] = useState(false);
  const [refused, setRefused] = useState<{ invalid: InvalidRow[]; invalidCount: number } | null>(null);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const send = useMutation({
    mutationFn: (chosen: File): Promise<Sent> =>
      props.kind === 'loans' ? uploadLoans(api, chosen, replace) : uploadPayments(api, chosen),
    onSuccess: (reply) => {
      setOutcome({ ok: true, text: reply.message });
      setFile(null);
    },
    onError: (error) => {
      // Rows the server refused are shown where the browser's own check shows them.
      const rows = refusedRows(error);
      if (rows) setRefused(rows);
      setOutcome({ ok: false, text: refusalMessage(error, MESSAGES.uploadError) });
    },
  });
  const validate = async (chosen: File): Promise<CsvSummary> => {
    const result =
      props.kind === 'loans' ? await validateLoansCsv(chosen) : await validatePaymentsCsv(chosen);
    return { ...result, validCount: result.total - result.invalidCount };
  };
  return (
    <Card withBorder h="100%" data-testid={`${props.kind}-csv`}>
      <Title order={4} mb={4}>
        {props.title}
      </Title>
      <Text size="sm" c="dimmed" mb="xs">
        {props.help}{' '}
        <Anchor
          component="button"
          type="button"
          size="sm"
          onClick={() => downloadText(props.sample.text(), props.sample.name)}
        >
          {props.sample.label}
        </Anchor>
      </Text>
      <Stack gap="sm">
        <CsvUpload
          validate={validate}
          onReset={() => {
            setFile(null);
            setRefused(null);
            setOutcome(null);
          }}
          onValid={(_, __, chosen) => setFile(chosen)}
          refused={refused}
        />
        {props.kind === 'loans' ? (
          <Checkbox
            label={L.replace}
            checked={replace}
            onChange={(event) => setReplace(event.currentTarget.checked)}
          />
        ) : null}
        <Group>
          <Button disabled={file === null} loading={send.isPending} onClick={() => file && send.mutate(file)}>
            {props.kind === 'loans' ? L.importButton : L.paymentsButton}
          </Button>
        </Group>
        {outcome ? (
          <Alert
            color={outcome.ok ? 'green' : 'red'}
            role={outcome.ok ? 'status' : 'alert'}
            data-testid={`${props.kind}-outcome`}
          >
            {outcome.text}
          </Alert>
        ) : null}
      </Stack>
    </Card>
  );
}

function FindLoan() {
  const { api } = useServices();
  const [typed, setTyped] = useState('');
  const [asked, setAsked] = useState<ReturnType<typeof lookupOf>>(null);
  const loan = useQuery({
    queryKey: asked && 'imei' in asked ? loanKeys.ofImei(asked.imei) : loanKeys.ofRef(asked?.loanRef ?? ''),
    queryFn: ({ signal }) => fetchLoan(api, asked ?? { loanRef: '' }, signal),
    enabled: asked !== null,
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setAsked(lookupOf(typed));
  };
  return (
    <Card withBorder>
      <Title order={4} mb="sm">
        {L.lookupTitle}
      </Title>
      <form onSubmit={submit} aria-label={L.lookupTitle}>
        <Group align="flex-end" gap="sm">
          <TextInput
            label={L.lookupLabel}
            w={360}
            autoComplete="off"
            value={typed}
            onChange={(event) => setTyped(event.currentTarget.value)}
          />
          <Button type="submit" variant="light">
            {L.find}
          </Button>
        </Group>
      </form>
      {asked === null || loan.isPending ? null : loan.isError ? (
        <Text c="red" mt="sm">
          {refusalMessage(loan.error, MESSAGES.cannotFetch)}
        </Text>
      ) : loan.data === null ? (
        <Text c="dimmed" mt="sm" data-testid="lookup-none">
          {L.lookupNone}
        </Text>
      ) : (
        <Stack mt="sm">
          <LoanDetails loan={loan.data} />
        </Stack>
      )}
    </Card>
  );
}
