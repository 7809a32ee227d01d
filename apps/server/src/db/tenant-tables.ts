/** Every table under row-level security (migrations 0032 and 0035): the tenant test checks each. */
import { TENANT_TABLES as FIRST } from './migrations/0032_row_level_security';
import { TENANT_TABLES as HISTORY } from './migrations/0035_row_level_security_history';

export const TENANT_TABLES: readonly string[] = [...FIRST, ...HISTORY];
