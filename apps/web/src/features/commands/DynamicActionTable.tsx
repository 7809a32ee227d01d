/**
 * The dynamic action table for users whose session holds a retailer phone: per row an IMEI
 * and the DYNAMIC_ACTIONS buttons, each sending `locknotification.php` with the fixed client code
 * (`clientof`) and the retailer's number. The server acts only on that retailer's devices. Success
 * alerts '{action} App initiated successfully.'; a reply mentioning 'Authorization Failed' clears all
 * storage and goes to /login.
 */
import { DYNAMIC_ACTIONS, dynamicActionSuccess, MESSAGES } from '@lendlock/contract';
import { Button, Card, Group, Stack, Table, Text, TextInput, Title } from '@mantine/core';
import { useMutation } from '@tanstack/react-query';
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { commandFailureText, sendCommand } from '../../api/commands';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { CommandStatus } from './CommandStatus';
import { imeiKeystroke, validateImei } from './forms';
import { COMMAND_LABELS } from './labels';

type DynamicAction = (typeof DYNAMIC_ACTIONS)[number];

interface Row {
  id: number;
  imei: string;
  error: string | null;
  transactionId: string | null;
}

const newRow = (id: number): Row => ({ id, imei: '', error: null, transactionId: null });

export function DynamicActionTable({ retailerPhone }: { retailerPhone: string }) {
  const { api, config, sessions } = useServices();
  const user = useSession()?.email ?? '';
  const navigate = useNavigate();
  const [rows, setRows] = useState<Row[]>([newRow(1)]);
  const update = (id: number, change: Partial<Row>) =>
    setRows((current) => current.map((row) => (row.id === id ? { ...row, ...change } : row)));

  const mutation = useMutation({
    mutationFn: ({ row, entry }: { row: Row; entry: DynamicAction }) =>
      sendCommand(
        api,
        {
          imei: row.imei,
          action: entry.action,
          user,
          clientof: config.clientCode,
          retailerNumber: retailerPhone,
        },
        { handleAuthorizationFailure: false },
      ),
    onError: (error) => {
      const message = commandFailureText(error);
      if (message.includes(MESSAGES.authorizationFailed)) {
        // This table clears all storage, not only the session.
        window.localStorage.clear();
        window.sessionStorage.clear();
        sessions.clear();
        void navigate('/login', { replace: true });
        return;
      }
      window.alert(message);
    },
  });

  const run = (row: Row, entry: DynamicAction) => {
    const invalid = validateImei(row.imei);
    update(row.id, { error: invalid });
    if (invalid) return;
    mutation.mutate(
      { row, entry },
      {
        onSuccess: (reply) => {
          window.alert(dynamicActionSuccess(entry.label));
          update(row.id, { transactionId: reply.transactionId });
        },
      },
    );
  };

  return (
    <Card withBorder padding="md" data-testid="dynamic-action-table">
      <Stack gap="sm">
        <div>
          <Title order={4}>{COMMAND_LABELS.retailerTable}</Title>
          <Text size="sm" c="dimmed">
            {COMMAND_LABELS.retailerTableHint(retailerPhone)}
          </Text>
        </div>
        <Table.ScrollContainer minWidth={560} maxHeight={350}>
          <Table verticalSpacing="xs" stickyHeader>
            <Table.Thead>
              <Table.Tr>
                <Table.Th>{COMMAND_LABELS.sno}</Table.Th>
                <Table.Th>{COMMAND_LABELS.imei}</Table.Th>
                <Table.Th>{COMMAND_LABELS.action}</Table.Th>
                <Table.Th>{COMMAND_LABELS.status}</Table.Th>
              </Table.Tr>
            </Table.Thead>
            <Table.Tbody>
              {rows.map((row, index) => (
                <Table.Tr key={row.id}>
                  <Table.Td>{index + 1}</Table.Td>
                  <Table.Td>
                    <TextInput
                      aria-label={COMMAND_LABELS.rowImei(index + 1)}
                      placeholder={COMMAND_LABELS.imeiPlaceholder}
                      inputMode="numeric"
                      autoComplete="off"
                      maxLength={15}
                      value={row.imei}
                      error={row.error}
                      onChange={(event) =>
                        update(row.id, { imei: imeiKeystroke(event.currentTarget.value), error: null })
                      }
                    />
                  </Table.Td>
                  <Table.Td>
                    <Group gap="xs" wrap="nowrap">
                      {DYNAMIC_ACTIONS.map((entry) => (
                        <Button
                          key={entry.action}
                          size="compact-sm"
                          variant="light"
                          aria-label={COMMAND_LABELS.rowAction(entry.label, index + 1)}
                          loading={
                            mutation.isPending &&
                            mutation.variables?.row.id === row.id &&
                            mutation.variables.entry.action === entry.action
                          }
                          onClick={() => run(row, entry)}
                        >
                          {entry.label}
                        </Button>
                      ))}
                    </Group>
                  </Table.Td>
                  <Table.Td>
                    {row.transactionId ? (
                      <CommandStatus
                        key={row.transactionId}
                        transactionId={row.transactionId}
                        testId={`dynamic-status-${index + 1}`}
                      />
                    ) : null}
                  </Table.Td>
                </Table.Tr>
              ))}
            </Table.Tbody>
          </Table>
        </Table.ScrollContainer>
        <Button
          variant="subtle"
          w="fit-content"
          onClick={() =>
            setRows((current) => [...current, newRow(Math.max(...current.map((r) => r.id)) + 1)])
          }
        >
          {COMMAND_LABELS.addRow}
        </Button>
      </Stack>
    </Card>
  );
}
