/**
 * The single form of every IMEI-only command, and of Graded Disable App: a grade select
 * (Grade 1 = level1, Grade 2 = level2) that must be chosen before the IMEI input is enabled.
 */
import { type CommandDefinition, GRADES } from '@lendlock/contract';
import { Button, NativeSelect, Stack } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import { type Grade, validateGradeForm, validateImei } from './forms';
import { ImeiField } from './ImeiField';
import { COMMAND_LABELS } from './labels';
import { type SentCommand, useSingleCommand } from './useSingleCommand';

const GRADE_OPTIONS = [{ value: '', label: COMMAND_LABELS.selectGrade }, ...GRADES];

export function ImeiCommandForm({
  definition,
  onSent,
}: {
  definition: CommandDefinition;
  onSent: (sent: SentCommand) => void;
}) {
  const graded = definition.input === 'grade';
  const [grade, setGrade] = useState<Grade | ''>('');
  const [imei, setImei] = useState('');
  const [errors, setErrors] = useState<{ grade?: string; imei?: string }>({});
  const { send, pending } = useSingleCommand(definition, onSent);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const found = graded ? validateGradeForm({ grade, imei }) : { imei: validateImei(imei) ?? undefined };
    setErrors(found);
    if (found.grade || found.imei) return;
    send({ imei, ...(graded && grade ? { level: grade } : {}) }, () => setImei(''));
  };

  return (
    <form onSubmit={submit} noValidate>
      <Stack gap="sm">
        {graded ? (
          <NativeSelect
            label={COMMAND_LABELS.grade}
            required
            data={GRADE_OPTIONS}
            value={grade}
            error={errors.grade}
            onChange={(event) => {
              setGrade(event.currentTarget.value as Grade | '');
              setErrors({});
            }}
          />
        ) : null}
        <ImeiField value={imei} onChange={setImei} error={errors.imei} disabled={graded && grade === ''} />
        <Button type="submit" loading={pending} disabled={graded && grade === ''} w="fit-content">
          {COMMAND_LABELS.submit}
        </Button>
      </Stack>
    </form>
  );
}
