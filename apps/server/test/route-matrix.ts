/**
 * Shared by the route matrices (authz-matrix.test.ts, tenant-matrix.test.ts): the tables a refused call
 * must leave as they were, and a default request for every route of the route table.
 */
import type { InjectOptions } from 'fastify';
import { randomProfile, TEST_ENROLLMENT_SECRET } from './devices';
import { imeiCsv, multipart } from './multipart';

/** Every table a refused call must leave as it was (the audit log records refusals; sessions their use). */
export const GUARDED_TABLES = [
  'users',
  'user_permissions',
  'api_keys',
  'devices',
  'commands',
  'batches',
  'batch_items',
  'batch_chunks',
  'financed_imeis',
  'password_resets',
  'releases',
  'deenrollments',
  'enrollment_secrets',
  'reregistration_requests',
  'device_imeis',
  'user_mfa',
  'mfa_recovery_codes',
  'mfa_challenges',
  'loans',
  'loan_instalments',
  'loan_payments',
] as const;

/**
 * A request for `route` ('METHOD /path' of ROUTE_POLICIES) by `token`, naming `device` where the route
 * takes an IMEI: a well-formed call, so that the route's authorization, not its validation, answers.
 */
export function defaultRequest(route: string, token: string | undefined, device: string): InjectOptions {
  const [method, path] = route.split(' ') as [InjectOptions['method'], string];
  const headers: Record<string, string> = token ? { 'x-api-key': token } : {};
  const url = path.replace(':feature', 'lockfiles').replace(':file', 'none.csv').replace('/*', '/anything');
  if (path.startsWith('/api/bulk')) {
    const body = multipart({}, { name: 'm.csv', type: 'text/csv', content: imeiCsv([device]) });
    return { method, url, headers: { ...headers, ...body.headers }, payload: body.payload };
  }
  const bodies: Record<string, object> = {
    '/api/locknotification.php': { imei: device, action: 'lock' },
    '/api/getimeidetails.php': { imei: device, action: 'lock' },
    '/api/updateCommandOnServer.php': { imeilist: device, action: 'lock' },
    '/api/updateStatusOnServer.php': { statusOf: 'lockfiles', fileName: 'm.csv', isComplete: 'incomplete' },
    '/api/formattedDevice.php': { imei: '123456789012345' },
    '/api/v2/mfa/verify': { mfaToken: 'x'.repeat(43), code: '123456' },
    '/api/v2/mfa/enrol/confirm': { code: '123456' },
    '/api/v2/mfa/reset': { email: 'nobody@lendlock.com' },
    '/api/adminlocknotification.php': { imei: '123456789012345', action: 'REBOOT' },
    '/api/devicedetails.php': { imei: device },
    '/api/auditReportByImei.php': { imei1: device },
    '/api/login.php': { email: 'nobody@lendlock.com', password: 'x' },
    '/device/v1/register': randomProfile(),
    '/device/v1/nonce': { imei1: device },
    '/api/v2/deviceIdentity': { imei: device },
    '/api/v2/reregistration/decide': { id: 1, decision: 'reject' },
    '/api/v2/enrollmentSecrets': { name: `matrix-${Math.random().toString(36).slice(2)}` },
    '/api/v2/enrollmentSecrets/revoke': { id: 1 },
  };
  if (path.startsWith('/device/v1/')) headers['x-enrollment-secret'] = TEST_ENROLLMENT_SECRET;
  const query = path.startsWith('/api/v2/reports/export')
    ? '?report=deenroll&startdate=2026-01-01&enddate=2026-01-02'
    : '';
  return method === 'GET'
    ? { method, url: `${url}${query}`, headers }
    : { method, url, headers, payload: bodies[path] ?? {} };
}
