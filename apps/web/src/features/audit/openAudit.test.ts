import { describe, expect, it } from 'vitest';
import { AUDIT_IMEI_STORAGE_KEY, isSuperadminPath, readAuditImei, storeAuditImei } from './openAudit';

const memoryStorage = () => {
  const data = new Map<string, string>();
  return {
    getItem: (k: string) => data.get(k) ?? null,
    setItem: (k: string, v: string) => data.set(k, v),
    data,
  };
};

describe('View Audit', () => {
  it('stores the IMEI under auditImei and reads it back (empty when none)', () => {
    const storage = memoryStorage();
    expect(readAuditImei(storage)).toBe('');
    storeAuditImei('356938035643809', storage);
    expect(storage.data.get(AUDIT_IMEI_STORAGE_KEY)).toBe('356938035643809');
    expect(AUDIT_IMEI_STORAGE_KEY).toBe('auditImei');
    expect(readAuditImei(storage)).toBe('356938035643809');
  });

  it('opens the /superadmin/ audit report from a /superadmin/ screen only', () => {
    expect(isSuperadminPath('/superadmin')).toBe(true);
    expect(isSuperadminPath('/superadmin/lastCommand')).toBe(true);
    expect(isSuperadminPath('/deviceDetails')).toBe(false);
    expect(isSuperadminPath('/superadminx')).toBe(false);
    expect(isSuperadminPath('/')).toBe(false);
  });
});
