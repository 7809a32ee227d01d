/**
 * The batch part of every command screen (the batch runs on the server as a durable job), driven by the
 * command's definition:
 * 1. a CSV is validated in a Web Worker with the contract's validator (IMEI or Notify), under 'Please wait
 *    while we evaluate this batch...', showing the file's name, size and read time, or its invalid rows
 *    with incorrect_data.csv; Graded Disable App needs its grade before the file selector is enabled;
 *    a Notify file is shown in the File Preview first;
 *    rows the server refuses on upload are listed the same way, with incorrect_data.csv of them;
 * 2–3. it is uploaded with the bulk script and followed under 'Please Wait while we are executing this
 *    batch...' (progress bar, Pause) to its processing time, summary, results and Download CSV;
 * 4. a batch of this feature that stopped incomplete shows the resume card when the screen opens; one
 *    running (e.g. started in another tab) shows its live progress.
 */
import { type BatchProgress, type CommandDefinition, GRADES, type NotifyRow } from '@lendlock/contract';
import { Alert, Card, Group, Loader, NativeSelect, Stack, Text, Title } from '@mantine/core';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import {
  batchKeys,
  cancelBatch,
  fetchBatchProgress,
  fetchCurrentBatch,
  pauseBatch,
  uploadBatch,
  uploadFailureText,
} from '../../api/batches';
import { isSessionLost, refusedRows } from '../../api/client';
import { commandFailureText } from '../../api/commands';
import type { UploadProgress } from '../../api/xhrFetch';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { CsvUpload } from '../csv/ImeiCsvUpload';
import { BatchOutcome } from './BatchOutcome';
import {
  type BatchGrade,
  batchKind,
  type PanelMode,
  panelMode,
  progressPollMs,
  resumeOptions,
  uploadLevel,
} from './batchRules';
import { FilePreview } from './FilePreview';
import { BATCH_LABELS } from './labels';
import { ResumeCard } from './ResumeCard';
import { RunningOverlay } from './RunningOverlay';
import { processStoppedBatch } from './resumeBatch';
import { validateInWorker } from './validateInWorker';

const GRADE_OPTIONS = [{ value: '', label: BATCH_LABELS.selectGrade }, ...GRADES];

export function BatchPanel({ definition }: { definition: CommandDefinition }) {
  const { api } = useServices();
  const queryClient = useQueryClient();
  const user = useSession()?.email ?? '';
  const kind = batchKind(definition);
  const graded = definition.input === 'grade';
  const statusOf = definition.statusOf ?? definition.screen;
  const resume = resumeOptions(definition);

  // The user's incomplete batch of this feature when the screen opens (the resume card, or live progress).
  const current = useQuery({
    queryKey: batchKeys.current(statusOf),
    queryFn: ({ signal }) => fetchCurrentBatch(api, statusOf, { signal }),
    retry: false,
    gcTime: 0,
  });
  /** The batch the panel follows; undefined until the user acts: then the server's incomplete one, if any. */
  const [chosen, setChosen] = useState<number | null | undefined>(undefined);
  const batchId = chosen === undefined ? (current.data?.batchId ?? null) : chosen;
  const progress = useQuery({
    queryKey: batchKeys.progress(batchId ?? 0),
    queryFn: ({ signal }) => fetchBatchProgress(api, batchId as number, { signal }),
    enabled: batchId !== null,
    initialData: () => (current.data?.batchId === batchId ? (current.data ?? undefined) : undefined),
    refetchInterval: (query) => progressPollMs(query.state.data),
    retry: false,
    gcTime: 0,
  });

  const [grade, setGrade] = useState<BatchGrade | ''>('');
  // Bumped to clear the file picker (a new form).
  const [formKey, setFormKey] = useState(0);
  const [preview, setPreview] = useState<{ file: File; rows: NotifyRow[] } | null>(null);
  const [failure, setFailure] = useState<string | null>(null);
  /** Rows the server refused after the browser's check passed them: shown as that check's own. */
  const [refused, setRefused] = useState<ReturnType<typeof refusedRows>>(null);
  const [notice, setNotice] = useState<string | null>(null);
  /** How much of the file being uploaded was sent. */
  const [sent, setSent] = useState<UploadProgress | null>(null);

  const follow = (batch: BatchProgress) => {
    queryClient.setQueryData(batchKeys.progress(batch.batchId), batch);
    setChosen(batch.batchId);
  };
  const alertFailure = (error: unknown) => window.alert(commandFailureText(error));

  const upload = useMutation({
    mutationFn: (request: { file: File; level: string | undefined }) => {
      setSent({ loaded: 0, total: request.file.size });
      return uploadBatch(api, {
        script: definition.bulkScript ?? '',
        user,
        ...request,
        onProgress: setSent,
        sending: BATCH_LABELS.uploadInWords(definition.displayName, request.file.name),
      });
    },
    onSuccess: (reply) => {
      if (reply.batchId === null) setNotice(reply.message);
      else setChosen(reply.batchId);
    },
    onError: (error) => {
      // A lost session goes to /login, which says why and that the upload was not sent.
      if (isSessionLost(error)) return;
      const rows = refusedRows(error);
      if (rows) {
        setRefused(rows);
        return;
      }
      const message = uploadFailureText(error);
      setFailure(message);
      window.alert(message);
    },
  });
  const send = (file: File) => upload.mutate({ file, level: uploadLevel(definition, grade) });

  const pause = useMutation({
    mutationFn: (id: number) => pauseBatch(api, id),
    onSuccess: follow,
    onError: alertFailure,
  });
  const processBatch = useMutation({
    mutationFn: (id: number) => processStoppedBatch(api, id, resume),
    onSuccess: (batch) => {
      if (batch) follow(batch);
    },
    onError: alertFailure,
  });
  const newBatch = useMutation({
    mutationFn: (id: number) => cancelBatch(api, id),
    onSuccess: () => showUploadCard(),
    onError: alertFailure,
  });

  /** A new file was chosen: nothing of the previous run stays on the screen. */
  const reset = () => {
    setChosen(null);
    setFailure(null);
    setRefused(null);
    setNotice(null);
    setPreview(null);
    upload.reset();
  };
  const showUploadCard = () => {
    reset();
    setFormKey((key) => key + 1);
  };

  if (current.isPending) {
    return (
      <Card withBorder padding="md" data-testid="batch-panel">
        <Group gap="xs">
          <Loader size="xs" />
          <Text size="sm">{BATCH_LABELS.loading}</Text>
        </Group>
      </Card>
    );
  }

  const batch = batchId === null ? undefined : progress.data;
  // Until the first progress of a just-uploaded batch arrives, it is running.
  const mode: PanelMode | 'upload' = batchId === null ? 'upload' : batch ? panelMode(batch.phase) : 'running';
  const executing = upload.isPending || mode === 'running';

  return (
    <Card withBorder padding="md" pos="relative" mih={executing ? 240 : undefined} data-testid="batch-panel">
      <RunningOverlay
        visible={executing}
        progress={mode === 'running' ? batch : undefined}
        sent={upload.isPending ? sent : null}
        onPause={() => batch && pause.mutate(batch.batchId)}
        pausing={pause.isPending}
      />
      <Stack gap="sm">
        <Title order={4}>{BATCH_LABELS.title}</Title>
        {mode === 'resume' && batch ? (
          <ResumeCard
            batch={batch}
            options={resume}
            onProcess={() => processBatch.mutate(batch.batchId)}
            onCancel={showUploadCard}
            onNewBatch={() => newBatch.mutate(batch.batchId)}
            busy={processBatch.isPending ? 'process' : newBatch.isPending ? 'newBatch' : null}
          />
        ) : (
          <>
            {graded ? (
              <NativeSelect
                label={BATCH_LABELS.grade}
                required
                data={GRADE_OPTIONS}
                value={grade}
                description={grade === '' ? BATCH_LABELS.gradeFirst : undefined}
                onChange={(event) => setGrade(event.currentTarget.value as BatchGrade | '')}
              />
            ) : null}
            <CsvUpload
              key={formKey}
              label={BATCH_LABELS.chooseFile}
              disabled={graded && grade === ''}
              validate={(file, signal) => validateInWorker(file, kind, signal)}
              onReset={reset}
              refused={refused}
              onValid={(check, _facts, file) => {
                if (kind === 'notify') setPreview({ file, rows: check.rows });
                else send(file);
              }}
            />
            {failure ? (
              <Alert color="red" data-testid="upload-error">
                {failure}
              </Alert>
            ) : null}
            {notice ? (
              <Alert color="yellow" data-testid="upload-notice">
                {notice}
              </Alert>
            ) : null}
            {mode === 'cancelled' ? <Alert color="gray">{BATCH_LABELS.cancelled}</Alert> : null}
            {mode === 'done' && batch ? <BatchOutcome key={batch.batchId} batch={batch} kind={kind} /> : null}
          </>
        )}
      </Stack>
      {kind === 'notify' ? (
        <FilePreview
          rows={preview?.rows ?? null}
          onCancel={showUploadCard}
          onSubmit={() => {
            if (!preview) return;
            setPreview(null);
            send(preview.file);
          }}
        />
      ) : null}
    </Card>
  );
}
