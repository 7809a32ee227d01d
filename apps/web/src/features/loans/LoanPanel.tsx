/**
 * The loan panel of Device Details: the device's loan (its open one, else its latest) with its summary and
 * schedule, or 'No loan on this device.'; ADMIN and SUPERADMIN record a payment or a promise to pay there.
 */
import { MESSAGES } from '@lendlock/contract';
import { Card, Center, Loader, Text, Title } from '@mantine/core';
import { useQuery } from '@tanstack/react-query';
import { refusalMessage } from '../../api/client';
import { fetchLoan, loanKeys } from '../../api/loans';
import { useServices } from '../../app/services';
import { LoanDetails } from './LoanDetails';
import { LOAN_LABELS as L } from './labels';

export function LoanPanel({ imei }: { imei: string }) {
  const { api } = useServices();
  const loan = useQuery({
    queryKey: loanKeys.ofImei(imei),
    queryFn: ({ signal }) => fetchLoan(api, { imei }, signal),
  });
  return (
    <Card withBorder data-testid="loan-panel">
      <Title order={4} mb="xs">
        {L.panelTitle}
      </Title>
      {loan.isPending ? (
        <Center>
          <Loader size="sm" />
        </Center>
      ) : loan.isError ? (
        <Text c="red">{refusalMessage(loan.error, MESSAGES.cannotFetch)}</Text>
      ) : loan.data === null ? (
        <Text size="sm" c="dimmed" data-testid="loan-none">
          {L.noLoan}
        </Text>
      ) : (
        <LoanDetails loan={loan.data} />
      )}
    </Card>
  );
}
