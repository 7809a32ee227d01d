/**
 * The route permission table: every route the server exposes appears here with its access rule.
 * A route missing from this table makes the app refuse to start (see plugins/auth.ts), and the
 * authorization tests read this table to generate their matrix.
 */
import type { ScreenName } from '@lendlock/contract';

export type Credential = 'session' | 'key';

export type Access =
  /** Anyone, signed in or not. */
  | { readonly kind: 'public' }
  /**
   * Any signed-in principal with one of the credentials. `beforeMfa`: also a session whose level must set
   * up two-factor authentication and has not yet (plugins/auth.ts refuses it every other route).
   */
  | { readonly kind: 'signedIn'; readonly credentials: readonly Credential[]; readonly beforeMfa?: true }
  /** ADMIN and SUPERADMIN, or a USER holding the permission named after the screen. */
  | {
      readonly kind: 'permission';
      readonly permission: ScreenName;
      readonly credentials: readonly Credential[];
    }
  /**
   * A command call: any signed-in principal reaches the handler, which requires the permission of the
   * command's screen from the command definition table (ADMIN and SUPERADMIN pass).
   */
  | { readonly kind: 'command'; readonly credentials: readonly Credential[] }
  /** ADMIN or SUPERADMIN. */
  | { readonly kind: 'admin'; readonly credentials: readonly Credential[] }
  /** SUPERADMIN only. */
  | { readonly kind: 'superadmin'; readonly credentials: readonly Credential[] };

const ANY: readonly Credential[] = ['session', 'key'];
const SESSION: readonly Credential[] = ['session'];

export const PUBLIC: Access = { kind: 'public' };
export const signedIn = (credentials = ANY): Access => ({ kind: 'signedIn', credentials });
/** A session's own sign-out and two-factor set-up, open to it before it has set up two-factor. */
export const beforeMfa = (credentials = SESSION): Access => ({
  kind: 'signedIn',
  credentials,
  beforeMfa: true,
});
export const permission = (name: ScreenName, credentials = ANY): Access => ({
  kind: 'permission',
  permission: name,
  credentials,
});
export const admin = (credentials = ANY): Access => ({ kind: 'admin', credentials });
export const command = (credentials = ANY): Access => ({ kind: 'command', credentials });
export const superadmin = (credentials = ANY): Access => ({ kind: 'superadmin', credentials });

/** `METHOD /path` → access. HEAD routes follow their GET. */
export const ROUTE_POLICIES: Readonly<Record<string, Access>> = {
  // Operations
  'GET /healthz': PUBLIC,
  'GET /readyz': PUBLIC,
  'GET /metrics': PUBLIC, // Prometheus; a bearer token when METRICS_TOKEN is set
  // Integrator documentation (OpenAPI, Swagger UI)
  'GET /docs': PUBLIC,
  'GET /docs/': PUBLIC,
  'GET /docs/json': PUBLIC,
  'GET /docs/yaml': PUBLIC,
  'GET /docs/static/index.html': PUBLIC,
  'GET /docs/static/swagger-initializer.js': PUBLIC,
  'GET /docs/static/*': PUBLIC,
  // The console and its runtime configuration
  'GET /config.json': PUBLIC,
  'GET /': PUBLIC,
  'GET /*': PUBLIC,
  'GET /notificationsamplecsv.csv': PUBLIC, // the Notify sample, dated on the day asked for
  // Sign-in and sessions
  'POST /api/login.php': PUBLIC,
  'POST /api/logout.php': beforeMfa(SESSION),
  // Two-factor authentication (modules/mfa): the second sign-in step, the account's own set-up, and
  // User Management's list and reset (an ADMIN resets USERs, a SUPERADMIN anyone: checked in the service)
  'POST /api/v2/mfa/verify': PUBLIC,
  'GET /api/v2/mfa/status': beforeMfa(SESSION),
  'POST /api/v2/mfa/enrol/start': beforeMfa(SESSION),
  'POST /api/v2/mfa/enrol/confirm': beforeMfa(SESSION),
  'GET /api/v2/mfa/users': admin(SESSION),
  'POST /api/v2/mfa/reset': admin(SESSION),
  // User management (ADMIN and SUPERADMIN, console sessions only)
  'GET /api/getUsers.php': admin(SESSION),
  'GET /api/getPermissions.php': admin(SESSION),
  'POST /api/addUser.php': admin(SESSION),
  'POST /api/updateUser.php': admin(SESSION),
  'POST /api/updateUserStatus.php': admin(SESSION),
  'POST /api/updateLoginStatus.php': admin(SESSION),
  // Password reset (the token is mailed, never returned)
  'POST /api/forgotPassword.php': PUBLIC,
  'POST /api/reset_password.php': PUBLIC,
  // Devices: the agent's registration (admitted by the enrollment secret) and the console's reads
  'POST /device/v1/register': PUBLIC,
  'POST /device/v1/nonce': PUBLIC,
  'POST /api/v2/deviceIdentity': permission('deviceDetails'),
  'POST /api/v2/reregistration/decide': admin(SESSION),
  // Enrollment secrets (SUPERADMIN, console sessions only)
  'GET /api/v2/enrollmentSecrets': superadmin(SESSION),
  'POST /api/v2/enrollmentSecrets': superadmin(SESSION),
  'POST /api/v2/enrollmentSecrets/revoke': superadmin(SESSION),
  // Webhooks (modules/webhooks): ADMIN and SUPERADMIN, in the console or with a key; a retailer's user
  // sees only that retailer's endpoints (checked in the service)
  'GET /api/v2/webhooks': admin(),
  'POST /api/v2/webhooks': admin(),
  'POST /api/v2/webhooks/update': admin(),
  'POST /api/v2/webhooks/delete': admin(),
  'POST /api/v2/webhooks/deliveries': admin(),
  'POST /api/v2/webhooks/replay': admin(),
  // Collections on autopilot (modules/collections): ADMIN and SUPERADMIN, in the console or with a key. The
  // service decides the rest: only a SUPERADMIN saves the policy or turns the kill switch off; a retailer's
  // user turns no kill switch and sees and holds only that retailer's devices
  'GET /api/v2/collections/policy': admin(),
  'PUT /api/v2/collections/policy': admin(),
  'GET /api/v2/collections/policy/versions': admin(),
  'POST /api/v2/collections/plan': admin(),
  'POST /api/v2/collections/plan/export': admin(),
  'GET /api/v2/collections/kill-switch': admin(),
  'PUT /api/v2/collections/kill-switch': admin(),
  'GET /api/v2/collections/holds': admin(),
  'PUT /api/v2/collections/holds/:imei': admin(),
  'DELETE /api/v2/collections/holds/:imei': admin(),
  'GET /api/v2/collections/releases': admin(),
  'POST /api/v2/collections/releases/:id/approve': admin(),
  'POST /api/v2/collections/releases/:id/reject': admin(),
  'GET /api/v2/collections/runs': admin(),
  'GET /api/v2/collections/failures': admin(),
  // Loans and payments (modules/loans): ADMIN and SUPERADMIN import, record and reverse, in the console or with a
  // key; whoever may open Device Details reads a device's loan. A retailer's user reaches only that
  // retailer's devices' loans (checked in the service).
  'POST /api/v2/loans': admin(),
  'POST /api/v2/loans/upload': admin(),
  'POST /api/v2/loans/get': permission('deviceDetails'),
  'POST /api/v2/loans/promise': admin(),
  'POST /api/v2/payments': admin(),
  'POST /api/v2/payments/upload': admin(),
  'POST /api/v2/payments/reverse': admin(),
  'GET /api/homeData.php': signedIn(),
  'GET /api/v2/dashboard': signedIn(),
  'POST /api/devicedetails.php': permission('deviceDetails'),
  'POST /api/auditReportByImei.php': permission('auditReport'),
  'GET /api/v2/auditReport/export': permission('auditReport'),
  'POST /api/getAppVersionDevices.php': permission('appversion'),
  'POST /api/v2/pendingCommands': permission('deviceDetails'),
  // …and the cancelled command's own screen, at a level at least its issuer's (authz/authority.ts)
  'POST /api/v2/cancelCommand': permission('deviceDetails'),
  'POST /api/v2/financedImeis': admin(),
  'POST /api/v2/financedImeis/upload': admin(),
  // Commands (the action decides the permission, from the command definition table)
  'POST /api/locknotification.php': command(),
  'POST /api/formattedDevice.php': permission('formattedDevice'),
  'POST /api/adminlocknotification.php': superadmin(),
  'POST /api/v2/commandStatus': signedIn(),
  'POST /api/v2/batchStatus': signedIn(),
  // Batches (the bulk upload scripts, run as server-side jobs) and the legacy per-IMEI loop
  ...Object.fromEntries(
    [
      'bulkReleaseCopy',
      'bulkLockCopy',
      'bulkUnlockCopy',
      'bulkBlockCopy',
      'bulkUnblockCopy',
      'bulkNotifyCopy',
      'bulkGreyCopy',
      'bulkUngreyCopy',
      'bulkSetWallpaperCopy',
      'bulkUnsetWallpaperCopy',
      'bulkSetAlarmCopy',
      'bulkUnsetAlarmCopy',
      'bulkEnableCameraCopy',
      'bulkDisableCameraCopy',
      'bulkEnableCreditCopy',
      'bulkRevokeCreditCopy',
    ].map((script) => [`POST /api/${script}.php`, command()]),
  ),
  'POST /api/getimeidetails.php': command(),
  'POST /api/updateStatusOnServer.php': command(), // the permission of its statusOf's screen
  'PUT /api/updateCommandOnServer.php': command(),
  // A batch's owner or a higher level, with its command's permission (authz/authority.ts)
  'POST /api/v2/batch/progress': signedIn(),
  'POST /api/v2/batch/current': signedIn(),
  'POST /api/v2/batch/results': signedIn(),
  'POST /api/v2/batch/pause': signedIn(),
  'POST /api/v2/batch/resume': signedIn(),
  'POST /api/v2/batch/cancel': signedIn(),
  'GET /api/v2/batch/export': signedIn(),
  // The Batches screen: only the batches the caller may read (batches/service.ts, BatchService.list)
  'POST /api/v2/batches': signedIn(),
  // Reports and history (downloadReports.php) and their streamed exports
  'POST /api/downloadReports.php': permission('reports'),
  'GET /api/v2/reports/export': permission('reports'),
  'GET /api/v2/uploads/:feature/:file': permission('reports'),
  // The audit log (SUPERADMIN)
  'POST /api/v2/audit/search': superadmin(SESSION),
  'GET /api/v2/audit/export': superadmin(SESSION),
  // Key management (ADMIN, SUPERADMIN or the keyManagement permission; sessions only)
  'GET /keyapi/keymanagement/view_keys.php': permission('keyManagement', SESSION),
  'POST /keyapi/generate_key.php': permission('keyManagement', SESSION),
  'POST /keyapi/keymanagement/update_key_status.php': permission('keyManagement', SESSION),
};

export function policyKey(method: string, url: string): string {
  return `${method === 'HEAD' ? 'GET' : method} ${url}`;
}
