/**
 * Every field of the collections policy, each labelled, with its problem under it (policyForm.validate).
 * Read-only (an ADMIN): the whole set is a disabled fieldset.
 */
import {
  Autocomplete,
  Fieldset,
  NativeSelect,
  SimpleGrid,
  Stack,
  Switch,
  Textarea,
  TextInput,
  Title,
} from '@mantine/core';
import { type ReactNode, useMemo } from 'react';
import { COLLECTIONS_LABELS as L } from './labels';
import type { PolicyErrors, PolicyFormValues, ReleaseMode } from './policyForm';
import { timeZoneOptions } from './policyForm';

const F = L.fields;
const RELEASE_OPTIONS = (Object.keys(L.releaseOptions) as ReleaseMode[]).map((value) => ({
  value,
  label: L.releaseOptions[value],
}));

type TextField =
  | 'preDaysBefore'
  | 'postEveryDays'
  | 'lockAfterDaysOverdue'
  | 'pauseMinAmount'
  | 'pauseMinShare'
  | 'quietStart'
  | 'quietEnd'
  | 'excludedImeis'
  | 'excludedRetailers';
type ToggleField = 'enabled' | 'due' | 'lockEnabled' | 'unlockOnPayment' | 'quietEnabled';

/** A titled group of the policy's fields, in a grid of `cols` columns from the small breakpoint on. */
function Section({ title, cols, children }: { title: string; cols: number; children: ReactNode }) {
  return (
    <Stack gap="xs">
      <Title order={3} size="h5">
        {title}
      </Title>
      <SimpleGrid cols={{ base: 1, sm: cols }}>{children}</SimpleGrid>
    </Stack>
  );
}

export function PolicyFields({
  values,
  errors,
  readOnly,
  onChange,
}: {
  values: PolicyFormValues;
  errors: PolicyErrors;
  readOnly: boolean;
  onChange: <K extends keyof PolicyFormValues>(field: K, value: PolicyFormValues[K]) => void;
}) {
  const zones = useMemo(() => timeZoneOptions(values.timeZone), [values.timeZone]);
  const text = (field: TextField) => (event: { currentTarget: { value: string } }) =>
    onChange(field, event.currentTarget.value);
  /** A switch; `beside` lines it up with the inputs of its row (their label above). */
  const toggle = (field: ToggleField, beside = false) => (
    <Switch
      size="md"
      {...(beside ? { mt: { sm: 'xl' } } : {})}
      label={F[field]}
      checked={values[field]}
      onChange={(event) => onChange(field, event.currentTarget.checked)}
      error={errors[field]}
    />
  );
  /** A whole number of days; `off` greys it out while its switch is off. */
  const days = (field: 'preDaysBefore' | 'postEveryDays' | 'lockAfterDaysOverdue', off = false) => (
    <TextInput
      label={F[field]}
      inputMode="numeric"
      maxLength={3}
      disabled={readOnly || off}
      value={values[field]}
      onChange={text(field)}
      error={errors[field]}
    />
  );
  const time = (field: 'quietStart' | 'quietEnd') => (
    <TextInput
      type="time"
      label={F[field]}
      disabled={readOnly || !values.quietEnabled}
      value={values[field]}
      onChange={text(field)}
      error={errors[field]}
    />
  );
  const list = (field: 'excludedImeis' | 'excludedRetailers') => (
    <Textarea
      label={F[field]}
      autosize
      minRows={2}
      maxRows={8}
      value={values[field]}
      onChange={text(field)}
      error={errors[field]}
    />
  );

  return (
    <Fieldset variant="unstyled" disabled={readOnly} data-testid="policy-fields">
      <Stack gap="lg">
        {toggle('enabled')}
        <Section title={L.remindersTitle} cols={3}>
          {days('preDaysBefore')}
          {toggle('due', true)}
          {days('postEveryDays')}
        </Section>
        <Section title={L.lockTitle} cols={2}>
          {toggle('lockEnabled')}
          {days('lockAfterDaysOverdue', !values.lockEnabled)}
          <TextInput
            label={F.pauseMinAmount}
            inputMode="decimal"
            maxLength={24}
            disabled={readOnly || !values.lockEnabled}
            value={values.pauseMinAmount}
            onChange={text('pauseMinAmount')}
            error={errors.pauseMinAmount}
          />
          <TextInput
            label={F.pauseMinShare}
            description={L.lockPauseNote}
            inputMode="numeric"
            maxLength={3}
            disabled={readOnly || !values.lockEnabled}
            value={values.pauseMinShare}
            onChange={text('pauseMinShare')}
            error={errors.pauseMinShare}
          />
          {toggle('unlockOnPayment')}
          <NativeSelect
            label={F.release}
            data={RELEASE_OPTIONS}
            value={values.release}
            onChange={(event) => onChange('release', event.currentTarget.value as ReleaseMode)}
            error={errors.release}
          />
        </Section>
        <Section title={L.scheduleTitle} cols={2}>
          <Autocomplete
            label={F.timeZone}
            data={zones}
            limit={20}
            value={values.timeZone}
            onChange={(value) => onChange('timeZone', value)}
            error={errors.timeZone}
          />
          {toggle('quietEnabled', true)}
          {time('quietStart')}
          {time('quietEnd')}
        </Section>
        <Section title={L.exclusionsTitle} cols={2}>
          {list('excludedImeis')}
          {list('excludedRetailers')}
        </Section>
      </Stack>
    </Fieldset>
  );
}
