import type {
  CommandInterface,
  CommandKind,
  CommandOptions,
  CommandStatus,
  DeviceState,
  KeyAttestation,
  KeyDeactivationReason,
  KeyStatus,
  RawCommand,
  UserLevel,
  UserStatus,
} from '@lendlock/contract';
import type { ColumnType, Generated, Insertable, Selectable } from 'kysely';

type CreatedAt = ColumnType<Date, Date | string | undefined, never>;
/** A column the database fills with its default when an insert leaves it out. */
type WithDefault<T> = ColumnType<T, T | undefined, T>;

export interface UsersTable {
  id: Generated<number>;
  email: string;
  phone: string | null;
  password_hash: string;
  userlevel: UserLevel;
  userstatus: ColumnType<UserStatus, UserStatus | undefined, UserStatus>;
  retailer_phone: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export interface PermissionsTable {
  id: Generated<number>;
  permission_name: string;
}

export interface UserPermissionsTable {
  user_id: number;
  permission_id: number;
}

export interface SessionsTable {
  /** sha256 of the token, hex; the token itself is never stored. */
  token_hash: string;
  user_id: number;
  created_at: CreatedAt;
  expires_at: Date;
  ended_at: Date | null;
  ended_reason: string | null;
  client_address: string | null;
  /** 0040: the last request that used it, written at most once a minute (SESSION_IDLE_TIMEOUT). */
  last_used_at: Generated<Date>;
}

export interface ApiKeysTable {
  id: Generated<number>;
  key_name: string;
  key_hash: string;
  status: ColumnType<KeyStatus, KeyStatus | undefined, KeyStatus>;
  user_id: number;
  created_at: CreatedAt;
  last_used_at: Date | null;
  /** 0014: who switched the key off, the lowest level that may switch it on again, and why. */
  deactivated_at: Date | null;
  deactivated_by: number | null;
  deactivated_by_level: UserLevel | null;
  deactivated_reason: KeyDeactivationReason | null;
}

export interface PasswordResetsTable {
  token_hash: string;
  user_id: number;
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
  used_reason: string | null;
}

export interface LoginThrottleTable {
  key: string;
  window_start: Date;
  failures: number;
}

/** 0012: a network (IPv4 /24, IPv6 /64) a user signed in from, hashed with the user id (ADR 0008). */
export interface LoginKnownNetworksTable {
  user_id: number;
  network_hash: string;
  first_seen_at: CreatedAt;
  last_seen_at: Generated<Date>;
}

/** 0012: outgoing mail, sent by the outbox worker with retries until `give_up_at`. */
/** 0021: webhook endpoints, their deliveries, and which offline devices were announced. */
export interface WebhookEndpointsTable {
  id: Generated<number>;
  url: string;
  description: WithDefault<string>;
  events: string[];
  secret_sealed: string;
  retailer_phone: string | null;
  enabled: WithDefault<boolean>;
  created_by: string;
  created_by_user_id: number | null;
  created_at: CreatedAt;
  deleted_at: Date | null;
  /** 0034: the endpoint's circuit breaker (modules/webhooks/delivery.ts). */
  consecutive_failures: WithDefault<number>;
  circuit_state: WithDefault<'closed' | 'open' | 'half_open'>;
  circuit_until: Date | null;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  endpoint_id: number;
  message_id: string;
  event: string;
  payload: ColumnType<unknown, string, string>;
  status: ColumnType<'PENDING' | 'DELIVERED' | 'FAILED', 'PENDING' | 'DELIVERED' | 'FAILED' | undefined>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  give_up_at: Date;
  last_status_code: number | null;
  last_error: string | null;
  created_at: CreatedAt;
  delivered_at: Date | null;
}

export interface WebhookOfflineNoticesTable {
  imei1: string;
  last_seen_at: Date;
}

export interface MailOutboxTable {
  id: Generated<number>;
  kind: string;
  recipient: string;
  subject: string;
  /** Cleared once sent or given up: a reset link must not outlive its use. */
  body: string | null;
  created_at: CreatedAt;
  give_up_at: Date;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  last_error: string | null;
  sent_at: Date | null;
  failed_at: Date | null;
}

/** 0013: an account's TOTP secret (sealed), confirmed once a code proved it; the last step used. */
export interface UserMfaTable {
  user_id: number;
  secret: string;
  created_at: CreatedAt;
  confirmed_at: Date | null;
  last_used_step: number | null;
  /** 0039: wrong codes in the window opened at `failures_since`; `locked_at` set at MFA_LOCK_AFTER. */
  failures: Generated<number>;
  failures_since: Date | null;
  locked_at: Date | null;
}

/** 0013: single-use recovery codes, stored as SHA-256. */
export interface MfaRecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  created_at: CreatedAt;
  used_at: Date | null;
}

/** 0013: the second sign-in step (`mfaToken`, stored as SHA-256). */
export interface MfaChallengesTable {
  token_hash: string;
  user_id: number;
  client: 'console' | 'superadmin';
  created_at: CreatedAt;
  expires_at: Date;
  used_at: Date | null;
}

export interface SettingsTable {
  key: string;
  value: string;
}

export interface AuditLogTable {
  id: Generated<number>;
  at: CreatedAt;
  actor_user_id: number | null;
  actor_key_id: number | null;
  actor: string;
  action: string;
  target: string | null;
  address: string | null;
  result: string;
  details: ColumnType<unknown, string | null | undefined, never>;
}

/** The audit log's hash chain (migration 0018), written by the sealer (modules/audit/chain.ts). */
export interface AuditChainTable {
  seq: number;
  audit_id: number;
  hash: string;
  sealed_at: CreatedAt;
}

export interface AuditAnchorsTable {
  seq: number;
  hash: string;
  mac: string;
  at: CreatedAt;
}

export interface FinancedImeisTable {
  imei: string;
  source: ColumnType<string, string | undefined, string>;
  created_at: CreatedAt;
}

/**
 * Who decided a key of a device's desired state: an operator (a person or an API key: single, batch or
 * device action ALL), collections (an automated `C` command), or the reconcile (a value no one commanded,
 * restored by the server). The reconcile's own commands carry the cause of the value they restore.
 */
export type DesiredCause = 'operator' | 'collections' | 'reconcile';

/** Per key of the desired state: its cause, and when it was decided (ISO timestamp). */
export type DesiredCauses = Partial<Record<keyof DeviceState, { cause: DesiredCause; at: string }>>;

export type ClaimStatus = 'ENROLLED' | 'DEENROLLED' | 'RELEASED';
export type RegistrationStatus = 'REGISTERED' | 'RE-REGISTERED';

export interface DevicesTable {
  imei1: string;
  imei2: string | null;
  manufacturer: WithDefault<string>;
  brand: WithDefault<string>;
  model: WithDefault<string>;
  appversion: WithDefault<string>;
  apptype: WithDefault<string>;
  retailer_phone: string | null;
  claimstatus: ColumnType<ClaimStatus, ClaimStatus | undefined, ClaimStatus>;
  registrationstatus: ColumnType<RegistrationStatus, RegistrationStatus | undefined, RegistrationStatus>;
  match_status: WithDefault<'YES' | 'NO'>;
  credential_hash: string | null;
  created_at: CreatedAt;
  registered_at: ColumnType<Date, Date | string | undefined, Date | string>;
  online: ColumnType<boolean, boolean | undefined, boolean>;
  last_seen_at: Date | null;
  /** 0027: when the device went offline; null while online (the offline sweep's index). */
  offline_since: Generated<Date | null>;
  reported_state: ColumnType<DeviceState | null, string | null | undefined, string | null>;
  desired_state: ColumnType<Partial<DeviceState>, string | undefined, string>;
  /** 0029: who decided each key of the desired state, and when (see DesiredCauses). */
  desired_cause: ColumnType<DesiredCauses, string | undefined, string>;
  last_command: string | null;
  last_command_at: Date | null;
  /** The device key (EC P-256, SPKI DER in base64), or null for an agent that enrolled without one. */
  public_key: string | null;
  key_security_level: KeySecurityLevel | null;
  key_enrolled_at: Date | null;
  /** 0036: the verdict on the key's attestation; null when none was sent or checked. */
  key_attestation: ColumnType<KeyAttestation | null, string | null | undefined, string | null>;
}

export type KeySecurityLevel = 'Software' | 'TrustedEnvironment' | 'StrongBox';

/** Every IMEI of every device (kept by a trigger on devices): one IMEI, one device. */
export interface DeviceImeisTable {
  imei: string;
  device: string;
}

export interface DeviceNoncesTable {
  nonce_hash: string;
  imei1: string;
  expires_at: Date;
}

export type ReregistrationStatus = 'PENDING' | 'APPROVED' | 'REJECTED' | 'USED';

export interface ReregistrationRequestsTable {
  id: Generated<number>;
  imei1: string;
  status: ColumnType<ReregistrationStatus, ReregistrationStatus | undefined, ReregistrationStatus>;
  address: string | null;
  profile: ColumnType<Record<string, unknown>, string, string>;
  public_key: string | null;
  attempts: ColumnType<number, number | undefined, number>;
  created_at: CreatedAt;
  last_attempt_at: ColumnType<Date, Date | string | undefined, Date | string>;
  decided_at: Date | null;
  decided_by: string | null;
  approved_until: Date | null;
  used_at: Date | null;
}

export interface EnrollmentSecretsTable {
  id: Generated<number>;
  name: string;
  secret_hash: string;
  created_at: CreatedAt;
  created_by: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  revoked_by: string | null;
  last_used_at: Date | null;
}

export interface RegistrationsTable {
  id: Generated<number>;
  imei1: string;
  imei2: string | null;
  match_status: string;
  registration_status: string;
  manufacturer: WithDefault<string>;
  brand: WithDefault<string>;
  model: WithDefault<string>;
  appversion: WithDefault<string>;
  apptype: WithDefault<string>;
  retailer_phone: string | null;
  created_at: CreatedAt;
}

export interface DeenrollmentsTable {
  id: Generated<number>;
  imei1: string;
  imei2: string | null;
  action: string;
  created_at: CreatedAt;
}

export interface ReleasesTable {
  id: Generated<number>;
  imei1: string;
  imei2: string | null;
  released_by: string;
  transaction_id: string | null;
  created_at: CreatedAt;
}

export interface CommandsTable {
  id: Generated<number>;
  transaction_id: string;
  imei1: string;
  command: RawCommand;
  options: ColumnType<CommandOptions, string | undefined, string>;
  kind: CommandKind;
  state_key: string | null;
  interface: CommandInterface;
  status: ColumnType<CommandStatus, CommandStatus | undefined, CommandStatus>;
  priority: ColumnType<number, number | undefined, number>;
  user_label: string;
  user_id: number | null;
  key_id: number | null;
  batch_id: number | null;
  created_at: CreatedAt;
  sent_at: Date | null;
  delivered_at: Date | null;
  completed_at: Date | null;
  expires_at: Date | null;
  result: string | null;
  /** 0029: the cause of a state command's value (the reconcile's: the one it restores); null before. */
  cause: DesiredCause | null;
}

export interface BatchesTable {
  id: Generated<number>;
  feature: string;
  command: string;
  options: ColumnType<CommandOptions, string | undefined, string>;
  file_name: string | null;
  stored_file: string | null;
  interface: ColumnType<CommandInterface, CommandInterface | undefined, CommandInterface>;
  user_label: string;
  user_id: number | null;
  key_id: number | null;
  status: ColumnType<
    'incomplete' | 'complete' | 'cancelled',
    'incomplete' | 'complete' | 'cancelled' | undefined,
    'incomplete' | 'complete' | 'cancelled'
  >;
  total: ColumnType<number, number | undefined, number>;
  valid: ColumnType<number, number | undefined, number>;
  invalid: ColumnType<number, number | undefined, number>;
  found: ColumnType<number, number | undefined, number>;
  not_found: ColumnType<number, number | undefined, number>;
  processed: ColumnType<number, number | undefined, number>;
  last_imei: string | null;
  remarks: string | null;
  created_at: CreatedAt;
  updated_at: ColumnType<Date, Date | string | undefined, Date | string>;
  completed_at: Date | null;
  paused: ColumnType<boolean, boolean | undefined, boolean>;
  lease_owner: string | null;
  lease_until: Date | null;
  started_at: Date | null;
  last_seq: ColumnType<number, number | undefined, number>;
  /** Why the server paused it on its own (owner disabled, key deactivated); null otherwise (0011). */
  paused_reason: string | null;
  /** When the uploads sweep deleted its file after UPLOAD_RETENTION (0015). */
  file_removed_at: Date | null;
}

/** A processed row of a batch, written once with its result (with its command, in one transaction). */
export interface BatchItemsTable {
  batch_id: number;
  seq: number;
  imei: string;
  name: string | null;
  amount: string | null;
  date: string | null;
  template: string | null;
  header: string | null;
  message: string | null;
  result: 'found' | 'not found' | null;
  note: string | null;
  transaction_id: string | null;
}

/** A batch's unprocessed rows, a chunk per row (migration 0009): deleted when the chunk is processed. */
export interface BatchChunksTable {
  batch_id: number;
  /** The S.No. of its first row (its key within the batch). */
  first_seq: number;
  seqs: number[];
  imeis: string[];
  /** The Notify columns, in the order of `seqs` (null when the batch has none). */
  names: (string | null)[] | null;
  amounts: (string | null)[] | null;
  dates: (string | null)[] | null;
  templates: (string | null)[] | null;
  headers: (string | null)[] | null;
  messages: (string | null)[] | null;
}

/** Device counts kept by triggers (migration 0007), in 16 slots that a reader adds up. */
export interface DeviceCountsTable {
  slot: number;
  total: WithDefault<number>;
  deenrolled: WithDefault<number>;
}

/** 0022: a lender's loan on one device (docs/features.md § Loans and payments); amounts in minor units. */
export type LoanStatus = 'OPEN' | 'PAID';
export type PaymentSource = 'API' | 'CSV' | 'CONSOLE';

export interface LoansTable {
  id: Generated<number>;
  loan_ref: string;
  /** The device's imei1 (devices.imei1): retailer scoping follows the device. */
  imei: string;
  customer_name: string;
  currency: string;
  status: ColumnType<LoanStatus, LoanStatus | undefined, LoanStatus>;
  /** A day (read as text, YYYY-MM-DD: pg would make a local-midnight Date of it). */
  promise_to_pay_until: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: CreatedAt;
  created_by: string | null;
  /** 0033: the tenant of its references (its device's retailer at creation; null: the lender's own). */
  retailer_phone: string | null;
}

export interface LoanInstalmentsTable {
  loan_id: number;
  seq: number;
  /** A day, YYYY-MM-DD (select it as text). */
  due_date: ColumnType<string, string, string>;
  amount_minor: number;
  paid_minor: WithDefault<number>;
  paid_at: Date | null;
}

export interface LoanPaymentsTable {
  id: Generated<number>;
  loan_id: number;
  payment_ref: string;
  amount_minor: number;
  paid_at: ColumnType<Date, Date | string, Date | string>;
  received_at: ColumnType<Date, Date | string | undefined, never>;
  source: PaymentSource | null;
  recorded_by: string | null;
  /** 0030: a reversed payment (a chargeback, a bounced transfer) is kept and counts nowhere. */
  reversed_at: Date | null;
  reversed_by: string | null;
  reversal_reason: string | null;
  /** 0033: the tenant of its reference (its loan's). */
  retailer_phone: WithDefault<string | null>;
}

/** 0023: collections on autopilot (modules/collections). */
export interface CollectionPoliciesTable {
  version: number;
  policy: ColumnType<unknown, string, string>;
  created_by: string;
  created_by_user_id: number | null;
  created_at: CreatedAt;
}

export interface CollectionControlTable {
  id: Generated<boolean>;
  kill_switch: WithDefault<boolean>;
  kill_reason: string | null;
  kill_changed_by: string | null;
  kill_changed_at: Date | null;
  /** Unused since 0031 (collection_payment_watch); kept for instances not yet upgraded. */
  payment_cursor: WithDefault<number>;
}

/** 0031: the payment watcher's cursor, one row, locked by the pass under way (SKIP LOCKED). */
export interface CollectionPaymentWatchTable {
  id: Generated<boolean>;
  payment_cursor: WithDefault<number>;
}

export interface CollectionHoldsTable {
  imei1: string;
  reason: string;
  held_by: string;
  held_by_user_id: number | null;
  held_at: ColumnType<Date, Date | string | undefined, Date | string>;
}

export type CollectionRunState = 'RUNNING' | 'DONE' | 'STOPPED';

export interface CollectionRunsTable {
  id: Generated<number>;
  /** A day, YYYY-MM-DD (select it as text). */
  run_date: ColumnType<string, string, string>;
  version: number;
  state: WithDefault<CollectionRunState>;
  lease_owner: string | null;
  lease_until: Date | null;
  cursor: WithDefault<number>;
  processed: WithDefault<number>;
  counts: ColumnType<unknown, string | undefined, string>;
  resumes: WithDefault<number>;
  note: string | null;
  started_at: CreatedAt;
  finished_at: Date | null;
}

export type CollectionActionState =
  | 'ISSUED'
  | 'REFUSED'
  | 'SKIPPED'
  | 'AWAITING_APPROVAL'
  | 'REJECTED'
  /** 0031: a command of the action failed; it is sent again (COLLECTIONS_RETRY). */
  | 'RETRYING'
  /** 0031: given up: every attempt failed, the day ended, or the plan no longer asks for it. */
  | 'FAILED';

export interface CollectionActionsTable {
  id: Generated<number>;
  run_id: number | null;
  loan_id: number;
  imei1: string;
  kind: string;
  grp: ColumnType<string, never, never>;
  action_date: ColumnType<string, string, string>;
  trigger_payment_id: WithDefault<number>;
  version: number;
  rule: string;
  state: CollectionActionState;
  skip_reason: string | null;
  note: string | null;
  due_date: ColumnType<string | null, string | null | undefined, string | null>;
  amount_minor: number | null;
  command_id: number | null;
  transaction_id: string | null;
  created_at: CreatedAt;
  decided_by: string | null;
  decided_by_user_id: number | null;
  decided_at: Date | null;
  /** 0031: commands sent for the action (retries included). */
  attempts: WithDefault<number>;
  /** 0031: when the next attempt is due (RETRYING); null when none is waiting. */
  retry_at: Date | null;
}

export interface DB {
  users: UsersTable;
  permissions: PermissionsTable;
  user_permissions: UserPermissionsTable;
  sessions: SessionsTable;
  api_keys: ApiKeysTable;
  login_throttle: LoginThrottleTable;
  user_mfa: UserMfaTable;
  mfa_recovery_codes: MfaRecoveryCodesTable;
  mfa_challenges: MfaChallengesTable;
  login_known_networks: LoginKnownNetworksTable;
  mail_outbox: MailOutboxTable;
  password_resets: PasswordResetsTable;
  financed_imeis: FinancedImeisTable;
  devices: DevicesTable;
  device_imeis: DeviceImeisTable;
  device_nonces: DeviceNoncesTable;
  reregistration_requests: ReregistrationRequestsTable;
  enrollment_secrets: EnrollmentSecretsTable;
  registrations: RegistrationsTable;
  deenrollments: DeenrollmentsTable;
  releases: ReleasesTable;
  commands: CommandsTable;
  batches: BatchesTable;
  batch_items: BatchItemsTable;
  batch_chunks: BatchChunksTable;
  settings: SettingsTable;
  audit_log: AuditLogTable;
  audit_chain: AuditChainTable;
  audit_anchors: AuditAnchorsTable;
  device_counts: DeviceCountsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_offline_notices: WebhookOfflineNoticesTable;
  loans: LoansTable;
  loan_instalments: LoanInstalmentsTable;
  loan_payments: LoanPaymentsTable;
  collection_policies: CollectionPoliciesTable;
  collection_control: CollectionControlTable;
  collection_payment_watch: CollectionPaymentWatchTable;
  collection_holds: CollectionHoldsTable;
  collection_runs: CollectionRunsTable;
  collection_actions: CollectionActionsTable;
}

export type UserRow = Selectable<UsersTable>;
export type NewUser = Insertable<UsersTable>;
export type DeviceRow = Selectable<DevicesTable>;
export type CommandRow = Selectable<CommandsTable>;
export type BatchRow = Selectable<BatchesTable>;
export type BatchItemRow = Selectable<BatchItemsTable>;
