import type { Migration } from 'kysely';
import * as m0001 from './0001_foundation';
import * as m0002 from './0002_keys_and_password_resets';
import * as m0003 from './0003_devices_and_commands';
import * as m0004 from './0004_batches';
import * as m0005 from './0005_batch_items';
import * as m0006 from './0006_report_indexes';
import * as m0007 from './0007_scale';
import * as m0008 from './0008_lean_command_indexes';
import * as m0009 from './0009_batch_chunks';
import * as m0010 from './0010_device_identity';
import * as m0011 from './0011_batch_authority';
import * as m0012 from './0012_sign_in_and_mail';
import * as m0013 from './0013_mfa';
import * as m0014 from './0014_key_deactivation';
import * as m0015 from './0015_upload_retention';
import * as m0016 from './0016_batch_items_lean';
import * as m0018 from './0018_audit_chain';
import * as m0021 from './0021_webhooks';
import * as m0022 from './0022_loans';
import * as m0023 from './0023_collections';
import * as m0024 from './0024_batch_history';
import * as m0026 from './0026_one_wallpaper_grant';
import * as m0027 from './0027_offline_since';
import * as m0029 from './0029_desired_cause';
import * as m0030 from './0030_payment_reversals';
import * as m0031 from './0031_collections_retries';
import * as m0032 from './0032_row_level_security';
import * as m0033 from './0033_tenant_references';
import * as m0034 from './0034_webhook_breaker';
import * as m0035 from './0035_row_level_security_history';
import * as m0036 from './0036_key_attestation';
import * as m0037 from './0037_audit_anchors';
import * as m0038 from './0038_migrations_owner_only';
import * as m0039 from './0039_mfa_lock';
import * as m0040 from './0040_session_idle';

/** Every migration, in order. Names are versions: never rename or edit one that has shipped. */
export const MIGRATIONS: Record<string, Migration> = {
  '0001_foundation': m0001,
  '0002_keys_and_password_resets': m0002,
  '0003_devices_and_commands': m0003,
  '0004_batches': m0004,
  '0005_batch_items': m0005,
  '0006_report_indexes': m0006,
  '0007_scale': m0007,
  '0008_lean_command_indexes': m0008,
  '0009_batch_chunks': m0009,
  '0010_device_identity': m0010,
  '0011_batch_authority': m0011,
  '0012_sign_in_and_mail': m0012,
  '0013_mfa': m0013,
  '0014_key_deactivation': m0014,
  '0015_upload_retention': m0015,
  '0016_batch_items_lean': m0016,
  '0018_audit_chain': m0018,
  '0021_webhooks': m0021,
  '0022_loans': m0022,
  '0023_collections': m0023,
  '0024_batch_history': m0024,
  '0026_one_wallpaper_grant': m0026,
  '0027_offline_since': m0027,
  '0029_desired_cause': m0029,
  '0030_payment_reversals': m0030,
  '0031_collections_retries': m0031,
  '0032_row_level_security': m0032,
  '0033_tenant_references': m0033,
  '0034_webhook_breaker': m0034,
  '0035_row_level_security_history': m0035,
  '0036_key_attestation': m0036,
  '0037_audit_anchors': m0037,
  '0038_migrations_owner_only': m0038,
  '0039_mfa_lock': m0039,
  '0040_session_idle': m0040,
};
