/**
 * The authority module: one answer to "may this principal do this action to this object?" for every
 * resource (docs/tenancy.md). Each resource has one policy file in resources/: its tenant rule (via
 * tenancy.ts) and its level rules (via authority.ts). Services ask here before they read or change an
 * object, and take the scope of their lists from here; routes and repositories decide nothing.
 *
 *   authorize(principal, 'users', 'manage', target, () => forbidden(USER_MESSAGES.usersOnly));
 *   const scope = scopeFor(principal, 'devices'); // → repository filter
 *
 * Every call is recorded for the request (decisions.ts), so a request that touched an object without a
 * decision fails in tests.
 */

import type { AppError } from '../core/errors';
import type { Principal } from '../core/principal';
import { recordDecision } from './decisions';
import { audit } from './resources/audit';
import { batches } from './resources/batches';
import { collections } from './resources/collections';
import { commands } from './resources/commands';
import { devices } from './resources/devices';
import { enrollment } from './resources/enrollment';
import { keys } from './resources/keys';
import { loans } from './resources/loans';
import { payments } from './resources/payments';
import { uploads } from './resources/uploads';
import { users } from './resources/users';
import { webhooks } from './resources/webhooks';

const POLICIES = {
  users,
  keys,
  devices,
  commands,
  batches,
  loans,
  payments,
  collections,
  webhooks,
  uploads,
  audit,
  enrollment,
};

type Policies = typeof POLICIES;
export type Resource = keyof Policies;
/** The actions of a resource (every rule of its policy but `scope`). */
export type Action<R extends Resource> = Exclude<keyof Policies[R], 'scope'> & string;
// biome-ignore lint/suspicious/noExplicitAny: the rule's own parameter types are read back below
type Rule = (principal: Principal, object: any) => boolean;
/** The object an action is decided on. */
export type ObjectOf<R extends Resource, A extends Action<R>> = Policies[R][A] extends (
  principal: Principal,
  object: infer O,
) => boolean
  ? O
  : never;
/** What a resource's lists may show to a principal. */
export type ScopeOf<R extends Resource> = ReturnType<Policies[R]['scope']>;

/** Whether `principal` may do `action` to `object` of `resource`. */
export function may<R extends Resource, A extends Action<R>>(
  principal: Principal,
  resource: R,
  action: A,
  object: ObjectOf<R, A>,
): boolean {
  const rule = POLICIES[resource][action] as unknown as Rule;
  const allowed = rule(principal, object);
  recordDecision({ resource, action, allowed });
  return allowed;
}

/**
 * As `may`, for an object that may not exist (`found` undefined or null: unknown, or hidden by row-level
 * security): an unknown object is refused exactly like another tenant's, and the decision recorded.
 * `toObject` gives what the rule reads of the found row. Narrows `found` where it answers true.
 */
export function mayIfFound<R extends Resource, A extends Action<R>, T>(
  principal: Principal,
  resource: R,
  action: A,
  found: T | null | undefined,
  toObject: (found: T) => ObjectOf<R, A>,
): found is T {
  if (found === null || found === undefined) {
    recordDecision({ resource, action, allowed: false });
    return false;
  }
  return may(principal, resource, action, toObject(found));
}

/** As `may`, throwing `refusal()` when it may not. */
export function authorize<R extends Resource, A extends Action<R>>(
  principal: Principal,
  resource: R,
  action: A,
  object: ObjectOf<R, A>,
  refusal: () => AppError,
): void {
  if (!may(principal, resource, action, object)) throw refusal();
}

/** The rows of `resource` a list may show `principal`; repositories apply it as given. */
export function scopeFor<R extends Resource>(principal: Principal, resource: R): ScopeOf<R> {
  recordDecision({ resource, action: 'scope', allowed: true });
  return POLICIES[resource].scope(principal) as ScopeOf<R>;
}

/**
 * For a signed-in call that reads or changes no tenant's object (its own settings' shape, a format
 * check): says so, explicitly, with the reason.
 */
export function noObjectTouched(reason: string): void {
  recordDecision({ resource: 'none', action: reason, allowed: true });
}
