/**
 * An invalid batch CSV shows 'CSV contains incorrect format data.', an 'Invalid IMEI' section
 * listing the invalid rows (line, error, data) and a downloadable incorrect_data.csv. The contract's
 * validator keeps the first 1,000 bad rows (each quoted to 200 characters) and counts the rest; the
 * screen and the file say so, exactly as the server's answer does.
 */
import { ERROR_REPORT_FILE_NAME, type InvalidRow, incorrectDataCsv, MESSAGES } from '@lendlock/contract';
import { Alert, Button, Group, ScrollArea, Stack, Table, Text, Title } from '@mantine/core';
import { useState } from 'react';
import { downloadText } from './download';
import { CSV_LABELS } from './labels';
import { INVALID_ROWS_SHOWN } from './outcome';

export function CsvErrorReport({
  invalid,
  invalidCount = invalid.length,
}: {
  invalid: readonly InvalidRow[];
  /** Every invalid row of the file (more than `invalid` lists when the file had over 1,000). */
  invalidCount?: number;
}) {
  const [preparing, setPreparing] = useState(false);
  const shown = invalid.slice(0, INVALID_ROWS_SHOWN);

  const download = async () => {
    setPreparing(true);
    try {
      downloadText(await incorrectDataCsv(invalid, invalidCount), ERROR_REPORT_FILE_NAME);
    } finally {
      setPreparing(false);
    }
  };

  return (
    <Stack gap="xs" data-testid="csv-errors">
      <Alert color="red" role="alert" title={MESSAGES.csvIncorrect} />
      <Group justify="space-between" align="center">
        <Title order={4}>{MESSAGES.invalidImeiSection}</Title>
        <Button size="xs" variant="light" color="red" onClick={download} loading={preparing}>
          {CSV_LABELS.downloadIncorrect}
        </Button>
      </Group>
      <ScrollArea.Autosize mah={350} type="auto">
        <Table striped withTableBorder stickyHeader data-testid="invalid-rows">
          <Table.Thead>
            <Table.Tr>
              <Table.Th>{CSV_LABELS.line}</Table.Th>
              <Table.Th>{CSV_LABELS.error}</Table.Th>
              <Table.Th>{CSV_LABELS.data}</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {shown.map((row) => (
              <Table.Tr key={`${row.line}-${row.error}`}>
                <Table.Td>{row.line}</Table.Td>
                <Table.Td>{row.error}</Table.Td>
                <Table.Td ff="monospace">{row.data}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      </ScrollArea.Autosize>
      {invalidCount > shown.length ? (
        <Text size="sm" c="dimmed" data-testid="invalid-rows-more">
          {CSV_LABELS.showingFirst(shown.length, invalidCount, invalid.length)}
        </Text>
      ) : null}
    </Stack>
  );
}
