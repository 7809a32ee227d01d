/**
 * Integrator API keys (design.md §5). A key acts with its owner's rights; its owner reads and switches it
 * off, and so does whoever may manage the owner (users.ts `manage`: same tenant, higher level).
 */
import type { Principal } from '../../plugins/auth';
import { type UserObject, users } from './users';

/** A key, by its owner. */
export interface KeyObject {
  readonly owner: UserObject;
}

const ownOrManaged = (p: Principal, key: KeyObject) =>
  key.owner.id === p.userId || users.manage(p, key.owner);

export const keys = {
  scope: users.scope,
  read: ownOrManaged,
  manage: ownOrManaged,
};
