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
import { useMemo } from 'react';
import { COLLECTIONS_LABELS as L } from './labels';
import type { PolicyErrors, PolicyFormValues, ReleaseMode } from './policyForm';
import { timeZoneOptions } from './policyForm';

const F = L.fields;
const RELEASE_OPTIONS = (Object.keys(L.releaseOptions) as ReleaseMode[]).map((value) => ({
  value,
  label: L.releaseOptions[value],
}));

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
  const text =
    (field: 'preDaysBefore' | 'postEveryDays' | 'lockAfterDaysOverdue' | 'quietStart' | 'quietEnd') =>
    (event: { currentTarget: { value: string } }) =>
      onChange(field, event.currentTarget.value);
  const toggle =
    (field: 'enabled' | 'due' | 'lockEnabled' | 'unlockOnPayment' | 'quietEnabled') =>
    (event: { currentTarget: { checked: boolean } }) =>
      onChange(field, event.currentTarget.checked);

  return (
    <Fieldset variant="unstyled" disabled={readOnly} data-testid="policy-fields">
      <Stack gap="lg">
        <Switch
          size="md"
          label={F.enabled}
          checked={values.enabled}
          onChange={toggle('enabled')}
          error={errors.enabled}
        />

        <Stack gap="xs">
          <Title order={3} size="h5">
            {L.remindersTitle}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 3 }}>
            <TextInput
              label={F.preDaysBefore}
              inputMode="numeric"
              maxLength={3}
              value={values.preDaysBefore}
              onChange={text('preDaysBefore')}
              error={errors.preDaysBefore}
            />
            <Switch
              size="md"
              mt={{ sm: 'xl' }}
              label={F.due}
              checked={values.due}
              onChange={toggle('due')}
              error={errors.due}
            />
            <TextInput
              label={F.postEveryDays}
              inputMode="numeric"
              maxLength={3}
              value={values.postEveryDays}
              onChange={text('postEveryDays')}
              error={errors.postEveryDays}
            />
          </SimpleGrid>
        </Stack>

        <Stack gap="xs">
          <Title order={3} size="h5">
            {L.lockTitle}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Switch
              size="md"
              label={F.lockEnabled}
              checked={values.lockEnabled}
              onChange={toggle('lockEnabled')}
            />
            <TextInput
              label={F.lockAfterDaysOverdue}
              inputMode="numeric"
              maxLength={3}
              disabled={readOnly || !values.lockEnabled}
              value={values.lockAfterDaysOverdue}
              onChange={text('lockAfterDaysOverdue')}
              error={errors.lockAfterDaysOverdue}
            />
            <Switch
              size="md"
              label={F.unlockOnPayment}
              checked={values.unlockOnPayment}
              onChange={toggle('unlockOnPayment')}
              error={errors.unlockOnPayment}
            />
            <NativeSelect
              label={F.release}
              data={RELEASE_OPTIONS}
              value={values.release}
              onChange={(event) => onChange('release', event.currentTarget.value as ReleaseMode)}
              error={errors.release}
            />
          </SimpleGrid>
        </Stack>

        <Stack gap="xs">
          <Title order={3} size="h5">
            {L.scheduleTitle}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Autocomplete
              label={F.timeZone}
              data={zones}
              limit={20}
              value={values.timeZone}
              onChange={(value) => onChange('timeZone', value)}
              error={errors.timeZone}
            />
            <Switch
              size="md"
              mt={{ sm: 'xl' }}
              label={F.quietEnabled}
              checked={values.quietEnabled}
              onChange={toggle('quietEnabled')}
            />
            <TextInput
              type="time"
              label={F.quietStart}
              disabled={readOnly || !values.quietEnabled}
              value={values.quietStart}
              onChange={text('quietStart')}
              error={errors.quietStart}
            />
            <TextInput
              type="time"
              label={F.quietEnd}
              disabled={readOnly || !values.quietEnabled}
              value={values.quietEnd}
              onChange={text('quietEnd')}
              error={errors.quietEnd}
            />
          </SimpleGrid>
        </Stack>

        <Stack gap="xs">
          <Title order={3} size="h5">
            {L.exclusionsTitle}
          </Title>
          <SimpleGrid cols={{ base: 1, sm: 2 }}>
            <Textarea
              label={F.excludedImeis}
              autosize
              minRows={2}
              maxRows={8}
              value={values.excludedImeis}
              onChange={(event) => onChange('excludedImeis', event.currentTarget.value)}
              error={errors.excludedImeis}
            />
            <Textarea
              label={F.excludedRetailers}
              autosize
              minRows={2}
              maxRows={8}
              value={values.excludedRetailers}
              onChange={(event) => onChange('excludedRetailers', event.currentTarget.value)}
              error={errors.excludedRetailers}
            />
          </SimpleGrid>
        </Stack>
      </Stack>
    </Fieldset>
  );
}
