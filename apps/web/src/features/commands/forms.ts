/**
 * The pure side of the command screens' single forms: IMEI typing and validate(), the graded
 * form, and the Enable Notification form (required fields, amount with up to 2 decimals formatted on
 * blur, template, date rules per template, the generated header and message).
 */
import {
  GRADES,
  type LockNotificationRequest,
  MESSAGES,
  NOTIFY_TEMPLATES,
  type NotifyTemplate,
  notifyMessage,
  parseDay,
  validateSingleImei,
} from '@lendlock/contract';
import { COMMAND_FORM_MESSAGES } from './labels';

export type Grade = (typeof GRADES)[number]['value'];

/** IMEI inputs take digits only, at most 15 (the rest of the IMEI rule is checked on submit). */
export function imeiKeystroke(value: string): string {
  return value.replace(/\D/g, '').slice(0, 15);
}

/** The single IMEI input: the hint 'Please provide a 15 digit IMEI number' when it is not one. */
export function validateImei(imei: string): string | null {
  return validateSingleImei(imei);
}

export interface GradeFormValues {
  grade: Grade | '';
  imei: string;
}

/** Graded Disable App: a grade first (the IMEI input stays disabled until then), then the IMEI. */
export function validateGradeForm(values: GradeFormValues): Partial<Record<keyof GradeFormValues, string>> {
  if (!GRADES.some((g) => g.value === values.grade)) return { grade: COMMAND_FORM_MESSAGES.gradeRequired };
  const imei = validateImei(values.imei);
  return imei ? { imei } : {};
}

// ---- Enable Notification ----

export interface NotifyFormValues {
  name: string;
  imei: string;
  /** Template code: '1' Pre Due, '2' Due Date, '3' Post Due Date; '' when none is chosen. */
  templateCode: string;
  amount: string;
  /** The date input's value, YYYY-MM-DD ('' when empty). */
  date: string;
}
export type NotifyErrors = Partial<Record<keyof NotifyFormValues, string>>;

export const EMPTY_NOTIFY_FORM: NotifyFormValues = {
  name: '',
  imei: '',
  templateCode: '',
  amount: '',
  date: '',
};

export function templateOf(code: string): NotifyTemplate | null {
  return NOTIFY_TEMPLATES.find((t) => String(t.code) === code)?.template ?? null;
}

const AMOUNT = /^\d+(\.\d{1,2})?$/;
const AMOUNT_TYPING = /^\d*(\.\d{0,2})?$/;

/** Amount typing: digits with at most one point and 2 decimals; any other keystroke is refused. */
export function amountKeystroke(next: string, previous: string): string {
  return AMOUNT_TYPING.test(next) ? next : previous;
}

/** On blur the amount is written with 2 decimals ('1499' → '1499.00', '12.5' → '12.50'). */
export function formatAmount(value: string): string {
  if (value === '' || value === '.' || !AMOUNT_TYPING.test(value)) return value;
  return Number(value).toFixed(2);
}

const pad = (n: number) => String(n).padStart(2, '0');

/** Today (or `date`) in the browser's local time as the date input writes it: YYYY-MM-DD. */
export function localIsoDate(date: Date = new Date()): string {
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/** YYYY-MM-DD → DD/MM/YYYY, the date format of the notification text. */
export function toDisplayDate(isoDate: string): string {
  const [year, month, day] = isoDate.split('-');
  return `${day}/${month}/${year}`;
}

/** The date the notification names: today for Due Date (its input is disabled), else the chosen one. */
export function notifyDate(values: NotifyFormValues, today: string): string {
  return templateOf(values.templateCode) === 'Due' ? today : values.date;
}

/**
 * Every problem of the form, by field. `today` is YYYY-MM-DD in local time: Pre Due needs a date today or
 * later, Post Due today or earlier; Due Date is always today. A missing template is the spec's alert.
 */
export function validateNotifyForm(values: NotifyFormValues, today: string): NotifyErrors {
  const errors: NotifyErrors = {};
  if (values.name.trim() === '') errors.name = COMMAND_FORM_MESSAGES.nameRequired;
  const imei = validateImei(values.imei);
  if (imei) errors.imei = imei;
  const template = templateOf(values.templateCode);
  if (!template) errors.templateCode = MESSAGES.selectTemplate;
  if (values.amount === '') errors.amount = COMMAND_FORM_MESSAGES.amountRequired;
  else if (!AMOUNT.test(values.amount)) errors.amount = COMMAND_FORM_MESSAGES.amountInvalid;
  else if (Number(values.amount) <= 0) errors.amount = COMMAND_FORM_MESSAGES.amountPositive;
  if (template !== 'Due') {
    if (!parseDay(values.date)) errors.date = COMMAND_FORM_MESSAGES.dateRequired;
    else if (template === 'Pre' && values.date < today) errors.date = COMMAND_FORM_MESSAGES.preDueDate;
    else if (template === 'Post' && values.date > today) errors.date = COMMAND_FORM_MESSAGES.postDueDate;
  }
  return errors;
}

export interface NotifyPreview {
  template: NotifyTemplate;
  header: string;
  message: string;
}

/** The header and text the contract generates from name, amount (₹, 2 decimals) and date (DD/MM/YYYY). */
export function notifyPreview(values: NotifyFormValues, today: string): NotifyPreview | null {
  const template = templateOf(values.templateCode);
  if (!template) return null;
  const generated = notifyMessage(template, {
    name: values.name,
    amount: values.amount,
    date: toDisplayDate(notifyDate(values, today)),
  });
  return { template, ...generated };
}

/** What a notification adds to `locknotification.php`: message = the generated text, caseType = template. */
export function notifyFields(
  preview: NotifyPreview,
  imei: string,
): Pick<LockNotificationRequest, 'imei' | 'message' | 'caseType'> {
  return { imei: imei.trim(), message: preview.message, caseType: preview.template };
}
