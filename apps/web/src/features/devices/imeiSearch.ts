/** The device search and the audit lookup act only on exactly 15 characters (a 15-digit IMEI). */
const IMEI = /^\d{15}$/;

/** The IMEI to look up for what is typed, or null (fewer or more than 15 characters, or not digits). */
export function searchableImei(typed: string): string | null {
  return typed.length === 15 && IMEI.test(typed) ? typed : null;
}

/** 15 characters that are not all digits: worth the hint 'Please provide a 15 digit IMEI number'. */
export function needsImeiHint(typed: string): boolean {
  return typed.length === 15 && !IMEI.test(typed);
}
