/**
 * Enable Notification's single form: name, IMEI, template, amount and date, all required;
 * the amount takes digits with up to 2 decimals and is written with 2 on blur; the date input is
 * disabled for Due Date (today); a missing template alerts 'Please select a template'. Submitting shows
 * the generated header and text (₹ amounts) for confirmation before anything is sent.
 */
import { type CommandDefinition, NOTIFY_TEMPLATES } from '@lendlock/contract';
import { Button, Group, Modal, NativeSelect, Stack, Text, TextInput } from '@mantine/core';
import { type FormEvent, useState } from 'react';
import {
  amountKeystroke,
  EMPTY_NOTIFY_FORM,
  formatAmount,
  localIsoDate,
  type NotifyErrors,
  type NotifyFormValues,
  type NotifyPreview,
  notifyDate,
  notifyFields,
  notifyPreview,
  templateOf,
  validateNotifyForm,
} from './forms';
import { ImeiField } from './ImeiField';
import { COMMAND_LABELS } from './labels';
import { type SentCommand, useSingleCommand } from './useSingleCommand';

const TEMPLATE_OPTIONS = [
  { value: '', label: COMMAND_LABELS.selectTemplate },
  ...NOTIFY_TEMPLATES.map((t) => ({ value: String(t.code), label: t.label })),
];

export function NotifyForm({
  definition,
  onSent,
}: {
  definition: CommandDefinition;
  onSent: (sent: SentCommand) => void;
}) {
  const [values, setValues] = useState<NotifyFormValues>(EMPTY_NOTIFY_FORM);
  const [errors, setErrors] = useState<NotifyErrors>({});
  const [preview, setPreview] = useState<NotifyPreview | null>(null);
  const { send, pending } = useSingleCommand(definition, onSent);
  const today = localIsoDate();
  const isDue = templateOf(values.templateCode) === 'Due';

  const set = (field: keyof NotifyFormValues, value: string) => {
    setValues((current) => ({ ...current, [field]: value }));
    setErrors((current) => ({ ...current, [field]: undefined }));
  };

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const found = validateNotifyForm(values, today);
    // The spec's alert for a missing template; the other problems show under their fields.
    if (found.templateCode) window.alert(found.templateCode);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setPreview(notifyPreview(values, today));
  };

  const confirm = () => {
    if (!preview) return;
    setPreview(null);
    send(notifyFields(preview, values.imei), () => setValues(EMPTY_NOTIFY_FORM));
  };

  return (
    <>
      <form onSubmit={submit} noValidate>
        <Stack gap="sm">
          <TextInput
            label={COMMAND_LABELS.customerName}
            required
            autoComplete="off"
            maxLength={100}
            value={values.name}
            error={errors.name}
            onChange={(event) => set('name', event.currentTarget.value)}
          />
          <ImeiField value={values.imei} onChange={(imei) => set('imei', imei)} error={errors.imei} />
          <NativeSelect
            label={COMMAND_LABELS.template}
            required
            data={TEMPLATE_OPTIONS}
            value={values.templateCode}
            error={errors.templateCode}
            onChange={(event) => set('templateCode', event.currentTarget.value)}
          />
          <TextInput
            label={COMMAND_LABELS.amount}
            required
            inputMode="decimal"
            autoComplete="off"
            leftSection="₹"
            value={values.amount}
            error={errors.amount}
            onChange={(event) => set('amount', amountKeystroke(event.currentTarget.value, values.amount))}
            onBlur={() => set('amount', formatAmount(values.amount))}
          />
          <TextInput
            label={COMMAND_LABELS.date}
            required
            type="date"
            value={notifyDate(values, today)}
            disabled={isDue}
            error={errors.date}
            onChange={(event) => set('date', event.currentTarget.value)}
          />
          <Button type="submit" loading={pending} w="fit-content">
            {COMMAND_LABELS.submit}
          </Button>
        </Stack>
      </form>
      {/* No scroll lock: react-remove-scroll writes a <style> tag without the CSP nonce. */}
      <Modal
        opened={preview !== null}
        onClose={() => setPreview(null)}
        title={COMMAND_LABELS.preview}
        centered
      >
        {preview ? (
          <Stack gap="sm" data-testid="notify-preview">
            <div>
              <Text size="xs" c="dimmed">
                {COMMAND_LABELS.previewHeader}
              </Text>
              <Text fw={600} data-testid="notify-preview-header">
                {preview.header}
              </Text>
            </div>
            <div>
              <Text size="xs" c="dimmed">
                {COMMAND_LABELS.previewMessage}
              </Text>
              <Text data-testid="notify-preview-message">{preview.message}</Text>
            </div>
            <Group justify="flex-end" gap="sm">
              <Button variant="default" onClick={() => setPreview(null)}>
                {COMMAND_LABELS.cancel}
              </Button>
              <Button onClick={confirm}>{COMMAND_LABELS.sendNotification}</Button>
            </Group>
          </Stack>
        ) : null}
      </Modal>
    </>
  );
}
