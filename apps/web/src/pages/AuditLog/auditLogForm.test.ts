import { MESSAGES } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../api/client';
import {
  auditFilter,
  EMPTY_AUDIT_LOG_FORM,
  failureMessage,
  openingForm,
  pageCount,
  pageOffset,
  rangeText,
  validate,
} from './auditLogForm';

const form = (values: Partial<typeof EMPTY_AUDIT_LOG_FORM>) => ({ ...EMPTY_AUDIT_LOG_FORM, ...values });

describe('the opening search', () => {
  it('is the last 7 days, today included, across a month and a year', () => {
    expect(openingForm('2026-11-28')).toEqual(form({ from: '2026-11-22', to: '2026-11-28' }));
    expect(openingForm('2027-01-03')).toEqual(form({ from: '2026-12-28', to: '2027-01-03' }));
    expect(validate(openingForm('2026-03-01'))).toBeNull();
    expect(auditFilter(openingForm('2026-03-01'))).toEqual({ from: '2026-02-23', to: '2026-03-01' });
  });
});

describe('validate', () => {
  it('accepts an empty form (the whole log) and any one filter', () => {
    expect(validate(EMPTY_AUDIT_LOG_FORM)).toBeNull();
    expect(validate(form({ imei: '350000000000001' }))).toBeNull();
    expect(validate(form({ from: '2030-01-01' }))).toBeNull();
    expect(validate(form({ to: '2030-01-01' }))).toBeNull();
  });

  it('accepts a range of one day and refuses an end before the start with the contract message', () => {
    expect(validate(form({ from: '2030-01-01', to: '2030-01-01' }))).toBeNull();
    expect(validate(form({ from: '2030-01-02', to: '2030-01-01' }))).toBe(MESSAGES.endBeforeStart);
    expect(validate(form({ from: '2030-12-31', to: '2029-01-01' }))).toBe(
      'End date cannot be prior to start date.',
    );
  });
});

describe('auditFilter', () => {
  it('trims the fields and leaves the empty ones out', () => {
    expect(auditFilter(EMPTY_AUDIT_LOG_FORM)).toEqual({});
    expect(
      auditFilter(
        form({ imei: ' 350000000000001 ', user: ' Root@lendlock.com', action: '  ', to: '2030-01-01' }),
      ),
    ).toEqual({ imei: '350000000000001', user: 'Root@lendlock.com', to: '2030-01-01' });
  });
});

describe('paging', () => {
  it('counts the pages of a total, one at least', () => {
    expect(pageCount(0, 500)).toBe(1);
    expect(pageCount(500, 500)).toBe(1);
    expect(pageCount(501, 500)).toBe(2);
    expect(pageCount(100_000, 500)).toBe(200);
  });

  it('starts page n at (n - 1) × size', () => {
    expect(pageOffset(1, 500)).toBe(0);
    expect(pageOffset(3, 500)).toBe(1000);
    expect(pageOffset(0, 500)).toBe(0);
  });

  it('tells which rows of the total are shown', () => {
    expect(rangeText(0, 500, 1234)).toBe('Rows 1–500 of 1,234');
    expect(rangeText(1000, 234, 1234)).toBe('Rows 1,001–1,234 of 1,234');
    expect(rangeText(0, 0, 0)).toBe('0 rows');
  });

  it('says "more than" when the server capped its count of a large search', () => {
    expect(rangeText(0, 500, 10_000, true)).toBe('Rows 1–500 of more than 10,000');
    expect(rangeText(0, 0, 10_000, true)).toBe('more than 10,000 rows');
    expect(rangeText(0, 500, 10_000, false)).toBe('Rows 1–500 of 10,000');
  });
});

describe('failureMessage', () => {
  it("shows the server's message when it refused the search", () => {
    expect(failureMessage(new ApiError(400, { message: MESSAGES.endBeforeStart }))).toBe(
      MESSAGES.endBeforeStart,
    );
  });

  it("shows 'Cannot fetch the data now, please try again' when the server failed or was not reached", () => {
    expect(failureMessage(new NetworkError(new TypeError('Failed to fetch')))).toBe(MESSAGES.cannotFetch);
    expect(failureMessage(new ApiError(500, { message: 'database down' }))).toBe(MESSAGES.cannotFetch);
    expect(failureMessage(new ApiError(400, null))).toBe(MESSAGES.cannotFetch);
    expect(failureMessage(new Error('parse'))).toBe('Cannot fetch the data now, please try again');
  });
});
