/**
 * Whose rows the work running now may see: the tenant travels with the asynchronous context
 * (AsyncLocalStorage), like the priority class (priority.ts), and every database connection carries the
 * tenant of the work that took it (database.ts `tenantDialect`), as the PostgreSQL setting
 * `lendlock.tenant`. The row-level security policies of migration 0032 read that setting: `'*'` sees every
 * row (the lender and the system: jobs, the device gateway, the collections engine, migrations), a
 * retailer's phone only that retailer's rows, and no setting at all nothing (docs/adr/0011).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { type Kysely, sql } from 'kysely';
import type { DB } from './types';

/** The tenant of the lender and of the system: every row. */
export const ALL_TENANTS = '*';

/** The PostgreSQL setting the policies read. */
export const TENANT_SETTING = 'lendlock.tenant';

const context = new AsyncLocalStorage<string>();

/** The tenant of the work running now: a retailer's phone, or ALL_TENANTS (also outside any context). */
export function currentTenant(): string {
  return context.getStore() ?? ALL_TENANTS;
}

/**
 * Runs `fn` (and everything it starts) as the tenant of a principal: `retailerPhone` for a retailer's
 * principal, every row for the lender's (`retailerPhone === null`).
 */
export function withTenant<T>(retailerPhone: string | null, fn: () => T): T {
  return context.run(retailerPhone ?? ALL_TENANTS, fn);
}

/**
 * Runs `fn` as the system (every row). For shared machinery started from inside a request (a poller's
 * kick, an outbox drain, the batch runner): its work is everyone's, never the caller's tenant's.
 */
export function asSystem<T>(fn: () => T): T {
  return context.run(ALL_TENANTS, fn);
}

/**
 * Runs `fn` with `db` seeing every row: shared machinery that a retailer's transaction runs in passing
 * and that must not be narrowed to that retailer (the fan-out of webhook events to every subscribed
 * endpoint, the lender's included, in the transaction of what happened). In a transaction of another
 * tenant, `lendlock.tenant` is '*' for `fn`'s statements only (SET LOCAL, put back after; a rollback
 * puts it back too); outside a transaction, `fn` runs `asSystem` and takes connections of its own. `fn`
 * must decide itself which rows it touches: it is exactly the code the policies no longer check.
 */
export async function asSystemWithin<D extends Kysely<DB>, T>(db: D, fn: (db: D) => Promise<T>): Promise<T> {
  const tenant = currentTenant();
  if (!db.isTransaction || tenant === ALL_TENANTS) return asSystem(() => fn(db));
  await sql`SELECT set_config(${TENANT_SETTING}, ${ALL_TENANTS}, true)`.execute(db);
  try {
    return await fn(db);
  } finally {
    // Fails only in a transaction already aborted, whose rollback puts the setting back anyway.
    await sql`SELECT set_config(${TENANT_SETTING}, ${tenant}, true)`.execute(db).catch(() => {});
  }
}
