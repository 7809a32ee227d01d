import { describe, expect, it } from 'vitest';
import { auditReportExportQuerySchema } from './auditReport';
import { MESSAGES } from './messages';

describe('the audit report download', () => {
  it('takes a 15-digit IMEI and a known time zone only', () => {
    expect(auditReportExportQuerySchema.safeParse({ imei1: '356938035643809' }).success).toBe(true);
    expect(
      auditReportExportQuerySchema.safeParse({ imei1: '356938035643809', timeZone: 'Europe/Paris' }).success,
    ).toBe(true);
    expect(auditReportExportQuerySchema.safeParse({ imei1: '35693803564380' }).success).toBe(false);
    expect(
      auditReportExportQuerySchema.safeParse({ imei1: '356938035643809', timeZone: 'Mars/Olympus' }).error
        ?.issues[0]?.message,
    ).toBe(MESSAGES.unknownTimeZone);
  });
});
