/**
 * The batch CSV picker: each new file resets the screen, is refused
 * unless it is a CSV ('Only CSV files are allowed.'), is validated under the 'Please wait while we
 * evaluate this batch...' overlay, and shows its name, size in KB and read time in ms. An invalid file
 * lists its errors with incorrect_data.csv; a file with no data rows passes with a note and nothing to
 * process; a valid one goes to `onValid`. Rows the server refuses after the file passed here (`refused`)
 * are shown the same way, in place of the counts that said the file was valid.
 *
 * `CsvUpload` takes the validation to run (the batch panel validates in a Web Worker); `ImeiCsvUpload`
 * is it with the contract's IMEI validator, handing the IMEIs over.
 */
import {
  CSV_SUMMARY_LABELS,
  csvFileTypeError,
  type InvalidRow,
  MESSAGES,
  validateImeiCsv,
} from '@lendlock/contract';
import { Alert, FileInput, LoadingOverlay, Stack, Text } from '@mantine/core';
import { useEffect, useRef, useState } from 'react';
import { CsvErrorReport } from './CsvErrorReport';
import { CSV_LABELS } from './labels';
import { csvOutcome, formatMs, formatSizeKb } from './outcome';

export interface CsvFileFacts {
  name: string;
  sizeBytes: number;
  readMs: number;
}

/** What the upload shows of a validated file. */
export interface CsvSummary {
  /** Data rows read. */
  total: number;
  validCount: number;
  /** The first invalid rows (the contract keeps at most MAX_INVALID_ROWS of them). */
  invalid: readonly InvalidRow[];
  /** Every invalid row of the file, listed or not. */
  invalidCount: number;
  /** Set when the file has no data rows. */
  note?: string | undefined;
  /** Valid rows that repeat an IMEI of an earlier row (absent when none): shown before the batch runs. */
  duplicates?: number | undefined;
}

interface CsvUploadProps<R extends CsvSummary> {
  /** Validates the chosen CSV; `signal` aborts when another file is chosen or the upload unmounts. */
  validate: (file: File, signal: AbortSignal) => Promise<R>;
  /** A new file was chosen: clear whatever the previous one produced. */
  onReset: () => void;
  /** The file passed with at least one valid row. */
  onValid: (result: R, facts: CsvFileFacts, file: File) => void;
  disabled?: boolean;
  label?: string;
  /** Rows the server refused once this file was sent: shown as this check's own errors. */
  refused?: { invalid: readonly InvalidRow[]; invalidCount: number } | null;
}

export function CsvUpload<R extends CsvSummary>({
  validate,
  onReset,
  onValid,
  disabled = false,
  label = CSV_LABELS.chooseFile,
  refused = null,
}: CsvUploadProps<R>) {
  const [file, setFile] = useState<File | null>(null);
  const [evaluating, setEvaluating] = useState(false);
  const [facts, setFacts] = useState<CsvFileFacts | null>(null);
  const [result, setResult] = useState<R | null>(null);
  // Only the latest file's answer counts when files are chosen quickly one after another.
  const latest = useRef<AbortController | null>(null);
  useEffect(() => () => latest.current?.abort(), []);

  const choose = async (chosen: File | null) => {
    latest.current?.abort();
    const run = new AbortController();
    latest.current = run;
    onReset();
    setFacts(null);
    setResult(null);
    setEvaluating(false);
    setFile(chosen);
    if (chosen === null) return;
    const typeError = csvFileTypeError(chosen);
    if (typeError) {
      setFile(null);
      window.alert(typeError);
      return;
    }
    setEvaluating(true);
    const started = performance.now();
    try {
      const validated = await validate(chosen, run.signal);
      if (run.signal.aborted) return;
      const read = { name: chosen.name, sizeBytes: chosen.size, readMs: performance.now() - started };
      setFacts(read);
      setResult(validated);
      if (csvOutcome(validated) === 'valid') onValid(validated, read, chosen);
    } catch {
      if (!run.signal.aborted) window.alert(MESSAGES.uploadedFileError);
    } finally {
      if (!run.signal.aborted) setEvaluating(false);
    }
  };

  // The server's refusal of the file's rows replaces what the browser found.
  const shown: CsvSummary | null =
    result && refused
      ? {
          ...result,
          invalid: refused.invalid,
          invalidCount: refused.invalidCount,
          validCount: result.total - refused.invalidCount,
        }
      : result;
  const outcome = shown ? csvOutcome(shown) : null;
  return (
    <Stack gap="sm" pos="relative">
      <LoadingOverlay
        visible={evaluating}
        zIndex={10}
        loaderProps={{
          children: (
            <Text fw={500} role="status">
              {MESSAGES.evaluatingBatch}
            </Text>
          ),
        }}
      />
      <FileInput
        label={label}
        placeholder={CSV_LABELS.choosePlaceholder}
        accept=".csv,text/csv,application/vnd.ms-excel"
        value={file}
        onChange={(chosen) => void choose(chosen)}
        disabled={disabled}
        clearable
        data-testid="csv-input"
      />
      {facts ? (
        <Text size="sm" c="dimmed" data-testid="csv-facts">
          {`${CSV_LABELS.fileName}: ${facts.name} · ${CSV_LABELS.fileSize}: ${formatSizeKb(facts.sizeBytes)} · ${CSV_LABELS.readTime}: ${formatMs(facts.readMs)}`}
        </Text>
      ) : null}
      {shown && outcome !== 'invalid' ? (
        <Text size="sm" data-testid="csv-counts">
          {`${CSV_LABELS.rows}: ${shown.total} · ${CSV_LABELS.validRows}: ${shown.validCount} · ${CSV_LABELS.invalidRows}: ${shown.invalidCount}${shown.duplicates ? ` · ${CSV_SUMMARY_LABELS.duplicates}: ${shown.duplicates}` : ''}`}
        </Text>
      ) : null}
      {shown && outcome === 'invalid' ? (
        <CsvErrorReport invalid={shown.invalid} invalidCount={shown.invalidCount} />
      ) : null}
      {shown && outcome === 'empty' ? (
        <Alert color="yellow" data-testid="csv-note">
          {shown.note}
        </Alert>
      ) : null}
    </Stack>
  );
}

/** The IMEI batch CSV picker of the lookup screens: the contract's validator, the valid IMEIs to `onValid`. */
export function ImeiCsvUpload({
  onValid,
  ...props
}: Omit<CsvUploadProps<CsvSummary>, 'validate' | 'onValid'> & {
  onValid: (imeis: string[], facts: CsvFileFacts) => void;
}) {
  return (
    <CsvUpload<CsvSummary & { imeis: string[] }>
      {...props}
      validate={validateImeis}
      onValid={(result, facts) => onValid(result.imeis, facts)}
    />
  );
}

async function validateImeis(file: File): Promise<CsvSummary & { imeis: string[] }> {
  const { valid, ...rest } = await validateImeiCsv(file);
  return { ...rest, validCount: valid.length, imeis: valid };
}
