import { TextInput } from '@mantine/core';
import { imeiKeystroke } from './forms';
import { COMMAND_LABELS } from './labels';

/** The single IMEI input: numeric, required, 15 digits; typing keeps digits only. */
export function ImeiField({
  value,
  onChange,
  error,
  disabled,
  label = COMMAND_LABELS.imei,
}: {
  value: string;
  onChange: (imei: string) => void;
  error?: string | null | undefined;
  disabled?: boolean;
  label?: string;
}) {
  return (
    <TextInput
      label={label}
      placeholder={COMMAND_LABELS.imeiPlaceholder}
      required
      inputMode="numeric"
      autoComplete="off"
      maxLength={15}
      value={value}
      error={error}
      disabled={disabled}
      onChange={(event) => onChange(imeiKeystroke(event.currentTarget.value))}
    />
  );
}
