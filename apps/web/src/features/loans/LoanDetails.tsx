/**
 * A loan as the console shows it (Device Details' loan panel, the Loans screen): its summary (next due date
 * and amount, days overdue and arrears, instalments paid and unpaid, last payment, promise to pay, credit),
 * its schedule, its payments (an ADMIN or SUPERADMIN reverses one there), and for ADMIN and SUPERADMIN the
 * payment form and the promise to pay.
 */
import { displayAmount, type LoanView, localDay, MESSAGES, type UserLevel } from '@lendlock/contract';
import {
  Badge,
  Button,
  Group,
  ScrollArea,
  SimpleGrid,
  Stack,
  Table,
  Text,
  TextInput,
  Title,
} from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { refusalMessage } from '../../api/client';
import { loanKeys, setPromiseToPay } from '../../api/loans';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { LOAN_LABELS as L } from './labels';
import { instalmentState, STATE_COLORS, STATE_LABELS, summaryLines } from './loanView';
import { PaymentList } from './PaymentList';
import { RecordPaymentForm } from './RecordPaymentForm';

/** Who may record payments and promises: ADMIN and SUPERADMIN (the server refuses anyone else). */
export function canManageLoans(level: UserLevel | undefined): boolean {
  return level === 'ADMIN' || level === 'SUPERADMIN';
}

export function LoanDetails({ loan }: { loan: LoanView }) {
  const canManage = canManageLoans(useSession()?.userlevel);
  const money = (minor: number) => displayAmount(minor, loan.currency);
  return (
    <Stack gap="sm" data-testid="loan-details">
      <Group justify="space-between">
        <Group gap="xs">
          <Title order={5} data-testid="loan-ref">
            {loan.loanRef}
          </Title>
          {loan.retailerPhone !== null ? (
            <Text size="sm" c="dimmed" data-testid="loan-retailer">
              {L.retailer(loan.retailerPhone)}
            </Text>
          ) : null}
          <Badge color={loan.status === 'PAID' ? 'green' : 'blue'} data-testid="loan-status">
            {loan.status === 'PAID' ? L.paid : L.open}
          </Badge>
        </Group>
        <Text size="sm" c="dimmed">
          {`${L.customer}: ${loan.customerName} · ${L.asOf(loan.summary.asOf, loan.summary.timeZone)}`}
        </Text>
      </Group>
      <SimpleGrid cols={{ base: 1, sm: 2, lg: 4 }} spacing="xs">
        {summaryLines(loan).map((line) => (
          <div key={line.key}>
            <Text size="xs" c="dimmed">
              {line.label}
            </Text>
            <Text
              fw={500}
              c={line.key === 'days-overdue' && loan.summary.daysOverdue > 0 ? 'red.8' : undefined}
              data-testid={`loan-${line.key}`}
            >
              {line.text}
            </Text>
          </div>
        ))}
      </SimpleGrid>
      <ScrollArea.Autosize mah={350} type="auto">
        <Table striped withTableBorder stickyHeader aria-label={L.instalments} data-testid="loan-schedule">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{L.seq}</Table.Th>
              <Table.Th>{L.dueDate}</Table.Th>
              <Table.Th>{L.amount}</Table.Th>
              <Table.Th>{L.paidAmount}</Table.Th>
              <Table.Th>{L.state}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {loan.instalments.map((instalment) => {
              const state = instalmentState(instalment, loan.summary.asOf);
              return (
                <Table.Tr key={instalment.seq} data-testid={`instalment-${instalment.seq}`}>
                  <Table.Td>{instalment.seq}</Table.Td>
                  <Table.Td>{instalment.dueDate}</Table.Td>
                  <Table.Td>{money(instalment.amountMinor)}</Table.Td>
                  <Table.Td>{money(instalment.paidMinor)}</Table.Td>
                  <Table.Td>
                    <Badge size="sm" variant="light" color={STATE_COLORS[state]}>
                      {STATE_LABELS[state]}
                    </Badge>
                  </Table.Td>
                </Table.Tr>
              );
            })}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
      <PaymentList loan={loan} canManage={canManage} />
      {canManage ? (
        <>
          <RecordPaymentForm
            key={loan.loanRef}
            loanRef={loan.loanRef}
            retailerPhone={loan.retailerPhone}
            currency={loan.currency}
          />
          {loan.status === 'OPEN' || loan.promiseToPayUntil ? <PromiseForm loan={loan} /> : null}
        </>
      ) : null}
    </Stack>
  );
}

function PromiseForm({ loan }: { loan: LoanView }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [until, setUntil] = useState(loan.promiseToPayUntil ?? localDay());
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const mutation = useMutation({
    mutationFn: (day: string | null) =>
      setPromiseToPay(api, { loanRef: loan.loanRef, until: day, retailerPhone: loan.retailerPhone }),
    onSuccess: (reply) => {
      setOutcome({ ok: true, text: reply.message });
      void queryClient.invalidateQueries({ queryKey: loanKeys.all });
    },
    onError: (error) => setOutcome({ ok: false, text: refusalMessage(error, MESSAGES.cannotFetch) }),
  });
  return (
    <Stack gap="xs">
      <Group align="flex-end" gap="sm">
        <TextInput
          label={L.promiseDate}
          type="date"
          value={until}
          onChange={(event) => setUntil(event.currentTarget.value)}
        />
        <Button variant="light" loading={mutation.isPending} onClick={() => mutation.mutate(until)}>
          {L.setPromise}
        </Button>
        {loan.promiseToPayUntil ? (
          <Button variant="subtle" color="gray" onClick={() => mutation.mutate(null)}>
            {L.clearPromise}
          </Button>
        ) : null}
      </Group>
      {outcome ? (
        <Text
          c={outcome.ok ? 'green.8' : 'red.8'}
          role={outcome.ok ? 'status' : 'alert'}
          data-testid="promise-outcome"
        >
          {outcome.text}
        </Text>
      ) : null}
    </Stack>
  );
}
