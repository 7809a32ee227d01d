/**
 * A loan's payments (the latest 100, latest paid first): when each was paid and recorded, its reference,
 * amount and who recorded it; a reversed one says when, by whom and why. An ADMIN or SUPERADMIN reverses a
 * payment that stands (a chargeback, a bounced transfer) with a reason (`v2/payments/reverse`): the loan is
 * then shown as it stands without it. The server's message is shown either way.
 */
import { displayAmount, LOAN_MESSAGES, type LoanPayment, type LoanView, MESSAGES } from '@lendlock/contract';
import { Badge, Button, Group, ScrollArea, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { refusalMessage } from '../../api/client';
import { loanKeys, reversePayment } from '../../api/loans';
import { useServices } from '../../app/services';
import { formatLocalDateTime } from '../../lib/datetime';
import { LOAN_LABELS as L } from './labels';

export function PaymentList({ loan, canManage }: { loan: LoanView; canManage: boolean }) {
  const [reversing, setReversing] = useState<LoanPayment | null>(null);
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const money = (minor: number) => displayAmount(minor, loan.currency);
  if (loan.payments.length === 0) return null;
  return (
    <Stack gap="xs" data-testid="loan-payments">
      <Title order={6}>{L.payments}</Title>
      <ScrollArea.Autosize mah={300} type="auto">
        <Table striped withTableBorder stickyHeader aria-label={L.payments}>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{L.paidAtCol}</Table.Th>
              <Table.Th>{L.referenceCol}</Table.Th>
              <Table.Th>{L.amount}</Table.Th>
              <Table.Th>{L.recordedCol}</Table.Th>
              <Table.Th>{L.state}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {loan.payments.map((payment) => (
              <Table.Tr key={payment.paymentRef} data-testid={`payment-${payment.paymentRef}`}>
                <Table.Td>{formatLocalDateTime(payment.paidAt)}</Table.Td>
                <Table.Td>{payment.paymentRef}</Table.Td>
                <Table.Td td={payment.reversedAt ? 'line-through' : undefined}>
                  {money(payment.amountMinor)}
                </Table.Td>
                <Table.Td>
                  {`${formatLocalDateTime(payment.receivedAt)}${payment.recordedBy ? ` · ${payment.recordedBy}` : ''}`}
                </Table.Td>
                <Table.Td>
                  {payment.reversedAt ? (
                    <Stack gap={2}>
                      <Badge size="sm" variant="light" color="red">
                        {L.reversedBadge}
                      </Badge>
                      <Text size="xs">
                        {L.reversedText(
                          payment.reversedBy ?? '',
                          formatLocalDateTime(payment.reversedAt),
                          payment.reversalReason ?? '',
                        )}
                      </Text>
                    </Stack>
                  ) : canManage ? (
                    <Button
                      size="compact-xs"
                      variant="subtle"
                      color="red"
                      aria-label={L.reverseOf(payment.paymentRef)}
                      onClick={() => {
                        setOutcome(null);
                        setReversing(payment);
                      }}
                    >
                      {L.reverse}
                    </Button>
                  ) : null}
                </Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
      {reversing ? (
        <ReverseForm
          key={reversing.paymentRef}
          payment={reversing}
          retailerPhone={loan.retailerPhone}
          amount={money(reversing.amountMinor)}
          onDone={(result) => {
            setReversing(null);
            setOutcome(result);
          }}
          onCancel={() => setReversing(null)}
        />
      ) : null}
      {outcome ? (
        <Text
          c={outcome.ok ? 'green.8' : 'red.8'}
          role={outcome.ok ? 'status' : 'alert'}
          data-testid="reverse-outcome"
        >
          {outcome.text}
        </Text>
      ) : null}
    </Stack>
  );
}

function ReverseForm({
  payment,
  retailerPhone,
  amount,
  onDone,
  onCancel,
}: {
  payment: LoanPayment;
  /** Its loan's tenant: a payment_ref is unique per tenant only. */
  retailerPhone: string | null;
  amount: string;
  onDone: (outcome: { ok: boolean; text: string }) => void;
  onCancel: () => void;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [reason, setReason] = useState('');
  const [problem, setProblem] = useState<string | null>(null);
  const mutation = useMutation({
    mutationFn: () =>
      reversePayment(api, { paymentRef: payment.paymentRef, reason: reason.trim(), retailerPhone }),
    onSuccess: (reply) => {
      onDone({ ok: true, text: reply.message });
      void queryClient.invalidateQueries({ queryKey: loanKeys.all });
    },
    onError: (error) => setProblem(refusalMessage(error, MESSAGES.cannotFetch)),
  });
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (reason.trim() === '') return setProblem(LOAN_MESSAGES.reversalReason);
    setProblem(null);
    mutation.mutate();
  };
  return (
    <form onSubmit={submit} noValidate aria-label={L.reverseTitle(payment.paymentRef, amount)}>
      <Stack gap="xs">
        <Text fw={500}>{L.reverseTitle(payment.paymentRef, amount)}</Text>
        <Text size="sm">{L.reverseHelp}</Text>
        <Group align="flex-end" gap="sm">
          <TextInput
            label={L.reversalReason}
            required
            maxLength={500}
            autoComplete="off"
            value={reason}
            onChange={(event) => setReason(event.currentTarget.value)}
            error={problem}
          />
          <Button type="submit" color="red" loading={mutation.isPending}>
            {L.confirmReverse}
          </Button>
          <Button variant="subtle" color="gray" onClick={onCancel}>
            {L.cancel}
          </Button>
        </Group>
      </Stack>
    </form>
  );
}
