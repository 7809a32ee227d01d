import { MESSAGES, notifyMessage } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import {
  amountKeystroke,
  EMPTY_NOTIFY_FORM,
  formatAmount,
  imeiKeystroke,
  localIsoDate,
  type NotifyFormValues,
  notifyFields,
  notifyPreview,
  toDisplayDate,
  validateGradeForm,
  validateImei,
  validateNotifyForm,
} from './forms';
import { COMMAND_FORM_MESSAGES } from './labels';

const IMEI = '356938035643809';
const TODAY = '2025-06-15';
const valid = (overrides: Partial<NotifyFormValues> = {}): NotifyFormValues => ({
  name: 'Asha',
  imei: IMEI,
  templateCode: '1',
  amount: '1499.50',
  date: '2025-06-20',
  ...overrides,
});

describe('single IMEI input', () => {
  it.each(['', '12345', '35693803564380', '000000000000000', '099999999999999', '3569380356438091', 'abc'])(
    '%j gets the hint',
    (imei) => expect(validateImei(imei)).toBe(MESSAGES.imeiHint),
  );

  it.each([IMEI, '100000000000000', '999999999999999'])('%s is accepted', (imei) =>
    expect(validateImei(imei)).toBeNull(),
  );

  it('typing keeps digits only, at most 15', () => {
    expect(imeiKeystroke('35a69-38 0356438091')).toBe('356938035643809');
  });
});

describe('graded single form', () => {
  it('asks for a grade before anything else', () => {
    expect(validateGradeForm({ grade: '', imei: '' })).toEqual({
      grade: COMMAND_FORM_MESSAGES.gradeRequired,
    });
  });

  it('then checks the IMEI', () => {
    expect(validateGradeForm({ grade: 'level2', imei: '123' })).toEqual({ imei: MESSAGES.imeiHint });
    expect(validateGradeForm({ grade: 'level1', imei: IMEI })).toEqual({});
  });
});

describe('notify single form', () => {
  it('an empty form names every required field, the template with the spec text', () => {
    expect(validateNotifyForm(EMPTY_NOTIFY_FORM, TODAY)).toEqual({
      name: COMMAND_FORM_MESSAGES.nameRequired,
      imei: MESSAGES.imeiHint,
      templateCode: MESSAGES.selectTemplate,
      amount: COMMAND_FORM_MESSAGES.amountRequired,
      date: COMMAND_FORM_MESSAGES.dateRequired,
    });
  });

  it('a complete form passes', () => {
    expect(validateNotifyForm(valid(), TODAY)).toEqual({});
  });

  it('a blank name is refused', () => {
    expect(validateNotifyForm(valid({ name: '   ' }), TODAY)).toEqual({
      name: COMMAND_FORM_MESSAGES.nameRequired,
    });
  });

  it.each(['12.345', '1e3', '-5', '.'])('amount %j is refused', (amount) => {
    expect(validateNotifyForm(valid({ amount }), TODAY).amount).toBe(COMMAND_FORM_MESSAGES.amountInvalid);
  });

  it('a zero amount is refused', () => {
    expect(validateNotifyForm(valid({ amount: '0.00' }), TODAY).amount).toBe(
      COMMAND_FORM_MESSAGES.amountPositive,
    );
  });

  it('Pre Due needs a date today or later', () => {
    expect(validateNotifyForm(valid({ date: '2025-06-14' }), TODAY).date).toBe(
      COMMAND_FORM_MESSAGES.preDueDate,
    );
    expect(validateNotifyForm(valid({ date: TODAY }), TODAY)).toEqual({});
  });

  it('Post Due needs a date today or earlier', () => {
    const post = { templateCode: '3' };
    expect(validateNotifyForm(valid({ ...post, date: '2025-06-16' }), TODAY).date).toBe(
      COMMAND_FORM_MESSAGES.postDueDate,
    );
    expect(validateNotifyForm(valid({ ...post, date: '2025-01-01' }), TODAY)).toEqual({});
    expect(validateNotifyForm(valid({ ...post, date: TODAY }), TODAY)).toEqual({});
  });

  it('Due Date needs no date: it is today', () => {
    expect(validateNotifyForm(valid({ templateCode: '2', date: '' }), TODAY)).toEqual({});
  });

  it('typing the amount accepts digits with up to 2 decimals and refuses anything else', () => {
    expect(amountKeystroke('12', '1')).toBe('12');
    expect(amountKeystroke('12.', '12')).toBe('12.');
    expect(amountKeystroke('12.34', '12.3')).toBe('12.34');
    expect(amountKeystroke('12.345', '12.34')).toBe('12.34');
    expect(amountKeystroke('12a', '12')).toBe('12');
    expect(amountKeystroke('1.2.', '1.2')).toBe('1.2');
  });

  it.each([
    ['1499', '1499.00'],
    ['12.5', '12.50'],
    ['12.', '12.00'],
    ['.5', '0.50'],
    ['7.25', '7.25'],
    ['', ''],
  ])('on blur %j becomes %j', (typed, shown) => expect(formatAmount(typed)).toBe(shown));

  it('dates are the local calendar day, shown DD/MM/YYYY', () => {
    expect(localIsoDate(new Date(2025, 0, 5, 23, 59))).toBe('2025-01-05');
    expect(toDisplayDate('2025-01-05')).toBe('05/01/2025');
  });

  it('the preview is the contract text with ₹ and the DD/MM/YYYY date; Due Date names today', () => {
    expect(notifyPreview(valid(), TODAY)).toEqual({
      template: 'Pre',
      ...notifyMessage('Pre', { name: 'Asha', amount: '1499.50', date: '20/06/2025' }),
    });
    expect(notifyPreview(valid(), TODAY)?.message).toContain('₹1,499.50');
    expect(notifyPreview(valid({ templateCode: '2', date: '' }), TODAY)).toEqual({
      template: 'Due',
      ...notifyMessage('Due', { name: 'Asha', amount: '1499.50', date: '15/06/2025' }),
    });
    expect(notifyPreview(valid({ templateCode: '' }), TODAY)).toBeNull();
  });

  it('sends the generated text as message and the template as caseType', () => {
    const preview = notifyPreview(valid({ templateCode: '3', date: '2025-06-01' }), TODAY);
    if (!preview) throw new Error('no preview');
    expect(notifyFields(preview, IMEI)).toEqual({
      imei: IMEI,
      message: preview.message,
      caseType: 'Post',
    });
  });
});
