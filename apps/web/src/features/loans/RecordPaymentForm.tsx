/**
 * Record a payment in the console (`v2/payments`, recorded as CONSOLE): the payment's reference (the same
 * reference is recorded once, so a double click or a retry records nothing twice), the loan (fixed on a
 * loan's panel, typed on the Loans screen), the amount and the day it was paid. The server's message is
 * shown either way.
 */
import { localDay, MESSAGES, type RecordPaymentResponse } from '@lendlock/contract';
import { Button, Group, Stack, Text, TextInput } from '@mantine/core';
import { useMutation, useQueryClient } from '@tanstack/react-query';
import { type FormEvent, useState } from 'react';
import { refusalMessage } from '../../api/client';
import { loanKeys, recordPayment } from '../../api/loans';
import { useServices } from '../../app/services';
import { LOAN_LABELS as L } from './labels';
import { paidAtOfDay, validatePaymentForm } from './loanView';

export function RecordPaymentForm({
  loanRef: fixedLoanRef,
  retailerPhone,
  currency = null,
  onRecorded,
}: {
  /** The loan, when the form belongs to one. */
  loanRef?: string;
  /** That loan's tenant: its ref may be another tenant's too (lender-wide, a ref is unique per tenant). */
  retailerPhone?: string | null;
  currency?: string | null;
  onRecorded?: (reply: RecordPaymentResponse) => void;
}) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const [paymentRef, setPaymentRef] = useState('');
  const [loanRef, setLoanRef] = useState(fixedLoanRef ?? '');
  const [amount, setAmount] = useState('');
  const [paidOn, setPaidOn] = useState(localDay());
  const [outcome, setOutcome] = useState<{ ok: boolean; text: string } | null>(null);
  const mutation = useMutation({
    mutationFn: () =>
      recordPayment(api, {
        paymentRef: paymentRef.trim(),
        loanRef: (fixedLoanRef ?? loanRef).trim(),
        amount: amount.trim(),
        paidAt: paidAtOfDay(paidOn.trim()),
        ...(fixedLoanRef !== undefined && retailerPhone !== undefined ? { retailerPhone } : {}),
      }),
    onSuccess: (reply) => {
      setOutcome({ ok: true, text: reply.message });
      setPaymentRef('');
      setAmount('');
      void queryClient.invalidateQueries({ queryKey: loanKeys.all });
      onRecorded?.(reply);
    },
    onError: (error) => setOutcome({ ok: false, text: refusalMessage(error, MESSAGES.cannotFetch) }),
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    setOutcome(null);
    const problem = validatePaymentForm(
      { paymentRef, loanRef: fixedLoanRef ?? loanRef, amount, paidOn },
      currency,
    );
    if (problem) return setOutcome({ ok: false, text: problem });
    mutation.mutate();
  };

  return (
    <form onSubmit={submit} noValidate aria-label={L.recordPayment}>
      <Stack gap="xs">
        <Group align="flex-end" gap="sm" wrap="wrap">
          <TextInput
            label={L.paymentRef}
            description={L.paymentRefHint}
            required
            autoComplete="off"
            value={paymentRef}
            onChange={(event) => setPaymentRef(event.currentTarget.value)}
          />
          {fixedLoanRef === undefined ? (
            <TextInput
              label={L.loanRef}
              required
              autoComplete="off"
              value={loanRef}
              onChange={(event) => setLoanRef(event.currentTarget.value)}
            />
          ) : null}
          <TextInput
            label={currency ? L.paymentAmount(currency) : L.amountAny}
            required
            inputMode="decimal"
            autoComplete="off"
            value={amount}
            onChange={(event) => setAmount(event.currentTarget.value)}
          />
          <TextInput
            label={L.paidOn}
            type="date"
            required
            value={paidOn}
            onChange={(event) => setPaidOn(event.currentTarget.value)}
          />
          <Button type="submit" loading={mutation.isPending}>
            {L.recordPayment}
          </Button>
        </Group>
        {outcome ? (
          <Text
            c={outcome.ok ? 'green.8' : 'red.8'}
            role={outcome.ok ? 'status' : 'alert'}
            data-testid="payment-outcome"
          >
            {outcome.text}
          </Text>
        ) : null}
      </Stack>
    </form>
  );
}
