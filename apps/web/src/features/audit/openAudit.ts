/**
 * View Audit (Device Details, Last Command Reports, Reports): the IMEI is stored in the browser and the
 * audit report opens on it, under /superadmin/ when the current screen is there.
 */
import { SUPERADMIN_PREFIX, screenPath } from '@lendlock/contract';
import { useCallback } from 'react';
import { useLocation, useNavigate } from 'react-router';

export const AUDIT_IMEI_STORAGE_KEY = 'auditImei';

type StorageLike = Pick<Storage, 'getItem' | 'setItem'>;

export function storeAuditImei(imei: string, storage: StorageLike = window.localStorage): void {
  storage.setItem(AUDIT_IMEI_STORAGE_KEY, imei);
}

export function readAuditImei(storage: StorageLike = window.localStorage): string {
  return storage.getItem(AUDIT_IMEI_STORAGE_KEY) ?? '';
}

export function isSuperadminPath(pathname: string): boolean {
  return pathname === SUPERADMIN_PREFIX || pathname.startsWith(`${SUPERADMIN_PREFIX}/`);
}

/** Whether the current screen is one of the /superadmin/ set. */
export function useSuperadminRoute(): boolean {
  return isSuperadminPath(useLocation().pathname);
}

/** Stores the IMEI and goes to /auditReport (or /superadmin/auditReport). */
export function useOpenAudit(): (imei: string) => void {
  const navigate = useNavigate();
  const superadmin = useSuperadminRoute();
  return useCallback(
    (imei: string) => {
      storeAuditImei(imei);
      navigate(screenPath('auditReport', superadmin));
    },
    [navigate, superadmin],
  );
}
