import { describe, expect, it } from 'vitest';
import type { PlanRow } from '../plan/repository';
import { commandOf } from './take';

const row = (currency: string, amountMinor: number): PlanRow => ({
  loan_id: 1,
  loan_ref: 'L-1',
  imei: '356938035643809',
  imei1: '356938035643809',
  customer_name: 'Asha',
  retailer_phone: null,
  currency,
  ord: 1,
  kind: 'POST',
  skipped: null,
  done: false,
  done_state: null,
  attempts: null,
  due_date: '2026-12-05',
  amount_minor: amountMinor,
  days_overdue: 3,
});

describe('a collections reminder', () => {
  it('is a NOTIFY with the spec’s Post text, in rupees for a loan in INR', () => {
    expect(commandOf(row('INR', 149_950))).toEqual({
      command: 'NOTIFY',
      options: {
        caseType: 'Post',
        message:
          'Dear Asha, your EMI of ₹1,499.50 was due on 05/12/2026 and is still unpaid. Please pay immediately to avoid your phone being locked.',
      },
    });
  });

  it('says the amount in the loan’s own currency, not in rupees', () => {
    expect(commandOf(row('USD', 123_450)).options).toMatchObject({
      message: expect.stringContaining('your EMI of USD 1,234.50 was due on 05/12/2026'),
    });
    expect(commandOf(row('JPY', 5000)).options).toMatchObject({
      message: expect.stringContaining('your EMI of JPY 5,000 was due'),
    });
  });
});
