import { MESSAGES, REPORT_TABS, reportTab, validateReportForm } from '@lendlock/contract';
import { describe, expect, it } from 'vitest';
import { ApiError, NetworkError } from '../../api/client';
import {
  EMPTY_REPORT_FORM,
  exportParts,
  failureMessage,
  removedUploadMessage,
  reportQuery,
  sameQuery,
  tabOf,
  validate,
} from './reportForm';

const registration = tabOf('registration');
const deenroll = tabOf('deenroll');
const wallpaper = tabOf('setwallpaper');
const range = { startdate: '2030-01-01', enddate: '2030-01-31' };

describe('validate', () => {
  it('requires both dates', () => {
    const missing = validateReportForm({ report: 'deenroll', startdate: '', enddate: '' });
    expect(missing).not.toBeNull();
    expect(validate(deenroll, EMPTY_REPORT_FORM)).toBe(missing);
    expect(validate(deenroll, { ...EMPTY_REPORT_FORM, startdate: '2030-01-01' })).toBe(missing);
    expect(validate(deenroll, { ...EMPTY_REPORT_FORM, enddate: '2030-01-01' })).toBe(missing);
    expect(validate(deenroll, { ...range, match: '' })).toBeNull();
  });

  it('requires the registration filter on the Registrations tab only', () => {
    const form = { ...range, match: '' as const };
    const required = validateReportForm({ report: 'registration', ...range });
    expect(required).not.toBeNull();
    expect(validate(registration, form)).toBe(required);
    expect(validate(registration, { ...form, match: 'ALL' })).toBeNull();
    expect(validate(wallpaper, form)).toBeNull();
  });

  it("says 'End date cannot be prior to start date.' when the start is after the end", () => {
    const form = { startdate: '2030-02-01', enddate: '2030-01-31', match: 'YES' as const };
    expect(validate(registration, form)).toBe(MESSAGES.endBeforeStart);
    expect(validate(wallpaper, form)).toBe(MESSAGES.endBeforeStart);
    expect(validate(wallpaper, { ...form, enddate: '2030-02-01' })).toBeNull();
  });
});

describe('the query and the downloads', () => {
  it('sends the filter on the Registrations tab and never elsewhere', () => {
    expect(reportQuery(registration, { ...range, match: 'NO' })).toEqual({
      report: 'registration',
      ...range,
      match: 'NO',
    });
    expect(reportQuery(deenroll, { ...range, match: 'NO' })).toEqual({ report: 'deenroll', ...range });
  });

  it('Download exports the rows, and on a command tab the executed commands too', () => {
    expect(exportParts(registration)).toEqual(['items']);
    expect(exportParts(deenroll)).toEqual(['items']);
    for (const tab of REPORT_TABS.filter((t) => t.kind === 'command'))
      expect(exportParts(tab)).toEqual(['items', 'commands']);
  });

  it('knows every tab and compares queries by every parameter', () => {
    expect(REPORT_TABS.map((t) => tabOf(t.report))).toEqual(REPORT_TABS.map((t) => reportTab(t.report)));
    const a = { report: 'registration', ...range, match: 'YES' as const };
    expect(sameQuery(a, { ...a })).toBe(true);
    expect(sameQuery(a, { ...a, match: 'NO' })).toBe(false);
    expect(sameQuery(a, { ...a, enddate: '2030-02-01' })).toBe(false);
    expect(sameQuery(a, null)).toBe(false);
  });
});

describe('failureMessage', () => {
  it("alerts the server's message when it refused", () => {
    const refused = new ApiError(400, { status: 'error', message: MESSAGES.endBeforeStart });
    expect(failureMessage(refused)).toBe(MESSAGES.endBeforeStart);
    expect(failureMessage(new ApiError(200, { status: 'failed', message: 'No data' }))).toBe('No data');
  });

  it("says 'Something went wrong.Please try again in sometime' on a thrown error", () => {
    expect(failureMessage(new NetworkError(new TypeError('Failed to fetch')))).toBe(MESSAGES.reportFailure);
    expect(failureMessage(new ApiError(500, { message: 'Internal Server Error' }))).toBe(
      MESSAGES.reportFailure,
    );
    expect(failureMessage(new Error('parse'))).toBe(MESSAGES.reportFailure);
  });
});

describe('an uploaded file removed after UPLOAD_RETENTION', () => {
  it('shows the server’s reason in place of the link (410), and nothing for other failures', () => {
    const message = 'This file was removed after 90 days (UPLOAD_RETENTION).';
    expect(removedUploadMessage(new ApiError(410, { status: 'error', code: 'GONE', message }))).toBe(message);
    expect(
      removedUploadMessage(
        new ApiError(404, { status: 'error', code: 'NOT_FOUND', message: 'No such file' }),
      ),
    ).toBeNull();
    expect(removedUploadMessage(new NetworkError(new Error('offline')))).toBeNull();
  });
});
