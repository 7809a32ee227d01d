import { describe, expect, it } from 'vitest';
import { notifyMessage } from './notify';

const fields = { name: ' Asha ', amount: '1234567.5', date: '05/12/2026' };

describe('notifyMessage', () => {
  it('writes the spec’s texts in rupees, with Indian grouping, for a Notify file (no currency)', () => {
    expect(notifyMessage('Pre', fields)).toEqual({
      header: 'Payment Reminder',
      message:
        'Dear Asha, your EMI of ₹12,34,567.50 is due on 05/12/2026. Please pay on time to keep using your phone without interruption.',
    });
  });

  it('writes rupees for a loan in INR, as the spec does', () => {
    expect(notifyMessage('Due', { ...fields, amount: '1499.50', currency: 'INR' }).message).toBe(
      'Dear Asha, your EMI of ₹1,499.50 is due today. Please pay today to avoid any restriction on your phone.',
    );
  });

  it('writes another currency by its code, with its own decimals, never in rupees', () => {
    expect(notifyMessage('Post', { ...fields, amount: '1234.50', currency: 'USD' }).message).toBe(
      'Dear Asha, your EMI of USD 1,234.50 was due on 05/12/2026 and is still unpaid. Please pay immediately to avoid your phone being locked.',
    );
    expect(notifyMessage('Due', { ...fields, amount: '5000', currency: 'JPY' }).message).toContain(
      'your EMI of JPY 5,000 is due today',
    );
    expect(notifyMessage('Due', { ...fields, amount: '12.345', currency: 'KWD' }).message).toContain(
      'your EMI of KWD 12.345 is due today',
    );
    for (const currency of ['USD', 'JPY', 'KWD'])
      expect(notifyMessage('Pre', { ...fields, amount: '10', currency }).message).not.toContain('₹');
  });
});
