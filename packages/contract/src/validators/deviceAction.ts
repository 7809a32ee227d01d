import { DEVICE_ACTIONS } from '../commands';
import { MESSAGES } from '../messages';

/** Device action: typing is limited to a prefix of ALL or up to 15 digits. */
export function deviceActionTypingError(value: string): string | null {
  if (value === '') return null;
  if (/^\d{1,15}$/.test(value)) return null;
  if ('ALL'.startsWith(value.toUpperCase())) return null;
  return MESSAGES.deviceActionTyping;
}

/** Device action on submit: IMEI of 15 digits or ALL; action required and REBOOT or UPDATE. */
export function validateDeviceAction(form: { imei: string; action: string }): string | null {
  const imei = form.imei.trim();
  if (!/^\d{15}$/.test(imei) && imei.toUpperCase() !== 'ALL') return MESSAGES.deviceActionImei;
  if (form.action === '') return MESSAGES.deviceActionRequired;
  if (!(DEVICE_ACTIONS as readonly string[]).includes(form.action)) return MESSAGES.deviceActionInvalid;
  return null;
}

/** Single IMEI inputs: numeric, required, 100000000000000–999999999999999. */
export function validateSingleImei(value: string): string | null {
  const trimmed = value.trim();
  if (!/^\d+$/.test(trimmed)) return MESSAGES.imeiHint;
  const n = Number(trimmed);
  return n >= 100000000000000 && n <= 999999999999999 && trimmed.length === 15 ? null : MESSAGES.imeiHint;
}
