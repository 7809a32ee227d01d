/**
 * Console users: one path for the CLI, the bootstrap and the User Management calls, with these rules
 * enforced here (allowed email domain, 10-digit phone, password length, unique email and phone, existing
 * permissions, none that does nothing for a USER; nobody disables or forces out the last active
 * SUPERADMIN). A level change ends the user's sessions. Every change is audited.
 *
 * Who may see, add and change which account (tenant and level) is the authority module's to say
 * (authz/resources/users.ts): every call of a signed-in user asks it, with the account in hand. Another
 * tenant's account answers as an unknown one. The CLI and the bootstrap create accounts without a
 * principal (`createUser`).
 */
import {
  type ConsoleUser,
  grantableToUser,
  isEmail,
  screenByName,
  USER_MESSAGES,
  type UserLevel,
  type UserStatus,
  validateEmailDomain,
  validatePhone,
} from '@lendlock/contract';
import type { Kysely, Transaction } from 'kysely';
import { authorize, noObjectTouched, scopeFor } from '../../authz';
import { tenantOfNewUser, type UserObject } from '../../authz/resources/users';
import { AppError, badRequest, conflict, forbidden, notFound } from '../../core/errors';
import type { ActorContext, Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB, UserRow } from '../../db/types';
import { passwordProblem } from '../../lib/password-policy';
import { hashPassword } from '../../lib/secrets';
import { type AuditEntry, appendAudit } from '../audit/repository';
import { BATCH_PAUSE_REASONS, pauseBatchesOf } from '../batches/service';
import { deactivateKeysOf } from '../keys/service';
import { endUserSessions, SESSION_END } from '../sessions/repository';
import { toConsoleUser } from './mapper';
import {
  countOtherActiveSuperadmins,
  existsEmailOrPhone,
  findUserByEmail,
  insertUser,
  listPermissions,
  listUsers,
  lockUser,
  phoneTakenByOther,
  setUserPermissions,
  updateUserRow,
} from './repository';

export interface NewUserInput {
  email: string;
  phone: string | null;
  password: string;
  userlevel: UserLevel;
  /** Permission ids or names. */
  permissions: (number | string)[];
  retailerPhone?: string | null;
}

export interface UserRules {
  allowedEmailDomains: string[];
  passwordMinLength: number;
  /** The bootstrap SUPERADMIN may use any email domain and no phone. */
  skipDomainCheck?: boolean;
}

// The texts live in the contract (the console reads them too); the key and MFA modules import them here.
export { USER_MESSAGES };

function check(message: string | null): void {
  if (message) throw badRequest(message);
}

/**
 * The ids of the wanted permissions (ids or names), each once. An account of level USER may not be given
 * one that opens nothing for a USER (userManagement, deviceAction): refused, named by its screen's label.
 */
async function resolvePermissionIds(
  db: Kysely<DB>,
  wanted: (number | string)[],
  level: UserLevel,
): Promise<number[]> {
  const known = await listPermissions(db);
  const found = wanted.map((p) => {
    const permission = known.find((k) => k.id === p || k.permission_name === p);
    if (!permission) throw badRequest(`Unknown permission: ${String(p)}`);
    return permission;
  });
  const useless = level === 'USER' ? found.find((p) => !grantableToUser(p.permission_name)) : undefined;
  if (useless) {
    const label = screenByName(useless.permission_name)?.label ?? useless.permission_name;
    throw badRequest(USER_MESSAGES.notForUser(label));
  }
  return [...new Set(found.map((p) => p.id))];
}

/** An account as the authority module judges it. */
export function userObject(row: Pick<UserRow, 'id' | 'userlevel' | 'retailer_phone'>): UserObject {
  return { id: row.id, userlevel: row.userlevel, retailerPhone: row.retailer_phone };
}

/**
 * Refuses `actor` an account it may not manage: another tenant's exactly as an unknown one (the call's
 * not-found), one of its tenant at a level it does not manage with `usersOnly`.
 */
function assertManages(actor: Principal, target: UserObject, notFoundMessage: string): void {
  authorize(actor, 'users', 'read', target, () => notFound(notFoundMessage));
  authorize(actor, 'users', 'manage', target, () => forbidden(USER_MESSAGES.usersOnly));
}

/** Creates an account; `audit`, when given, is written in the same transaction. */
export async function createUser(
  db: Kysely<DB>,
  input: NewUserInput,
  rules: UserRules,
  audit?: AuditEntry,
): Promise<number> {
  const email = input.email.trim();
  if (!isEmail(email)) throw badRequest(USER_MESSAGES.invalidEmail);
  if (!rules.skipDomainCheck) check(validateEmailDomain(email, rules.allowedEmailDomains));
  const phone = input.phone?.trim() || null;
  if (phone !== null || !rules.skipDomainCheck) check(validatePhone(phone ?? ''));
  check(passwordProblem(input.password, rules.passwordMinLength));
  const ids = await resolvePermissionIds(db, input.permissions, input.userlevel);
  const taken = await existsEmailOrPhone(db, email, phone);
  if (taken.email) throw conflict(USER_MESSAGES.emailTaken);
  if (taken.phone) throw conflict(USER_MESSAGES.phoneTaken);
  const passwordHash = await hashPassword(input.password);
  try {
    return await inTransaction(db, async (trx) => {
      const id = await insertUser(trx, {
        email,
        phone,
        password_hash: passwordHash,
        userlevel: input.userlevel,
        retailer_phone: input.retailerPhone?.trim() || null,
      });
      await setUserPermissions(trx, id, ids);
      if (audit) await appendAudit(trx, audit);
      return id;
    });
  } catch (error) {
    // A concurrent insert won the race on a unique index.
    if ((error as { code?: string }).code === '23505') {
      throw new AppError(409, 'CONFLICT', 'A user with this email or phone already exists');
    }
    throw error;
  }
}

/** Runs `fn` on a locked target user found by id or email; refuses an unknown user. */
async function withTarget<T>(
  db: Kysely<DB>,
  find: { id?: number; email?: string },
  fn: (trx: Transaction<DB>, target: UserRow) => Promise<T>,
): Promise<T> {
  return inTransaction(db, async (trx) => {
    const id = find.id ?? (find.email ? (await findUserByEmail(trx, find.email))?.id : undefined);
    const target = id === undefined ? undefined : await lockUser(trx, id);
    if (!target) throw notFound(USER_MESSAGES.notFound);
    return fn(trx, target);
  });
}

/** User Management: the accounts a principal may see, add and change. */
export class UserService {
  private readonly db: Kysely<DB>;
  private readonly rules: UserRules;

  constructor(deps: { db: Kysely<DB>; rules: UserRules }) {
    this.db = deps.db;
    this.rules = deps.rules;
  }

  /** The accounts `actor` may see: its tenant's (the lender's users: every account). */
  async getUsers(actor: Principal): Promise<ConsoleUser[]> {
    return (await listUsers(this.db, scopeFor(actor, 'users'))).map(toConsoleUser);
  }

  /** The permission catalogue (the same for every tenant: names of screens, no account). */
  async getPermissions() {
    noObjectTouched('the permission catalogue');
    return listPermissions(this.db);
  }

  async addUser(
    { actor, address }: ActorContext,
    input: Omit<NewUserInput, 'userlevel'> & { userlevel?: UserLevel | undefined },
  ): Promise<number> {
    const userlevel = input.userlevel ?? 'USER';
    // A retailer's user adds accounts of its retailer only: what the request named is replaced.
    const retailerPhone = tenantOfNewUser(actor, input.retailerPhone?.trim() || null);
    authorize(actor, 'users', 'create', { userlevel, retailerPhone }, () =>
      forbidden(USER_MESSAGES.levelRaise),
    );
    if (retailerPhone) check(validatePhone(retailerPhone));
    // The account and its audit row are committed together.
    return createUser(this.db, { ...input, userlevel, retailerPhone }, this.rules, {
      actor,
      action: 'user.add',
      target: input.email.trim(),
      address,
      result: 'success',
      details: { userlevel, permissions: input.permissions, retailerPhone },
    });
  }

  async updateUser(
    { actor, address }: ActorContext,
    input: {
      id: number;
      email: string;
      phone: string;
      permissions: number[];
      userlevel?: UserLevel | undefined;
    },
  ): Promise<void> {
    check(validateEmailDomain(input.email, this.rules.allowedEmailDomains));
    check(validatePhone(input.phone));
    await withTarget(this.db, { id: input.id }, async (trx, target) => {
      const account = userObject(target);
      assertManages(actor, account, USER_MESSAGES.notFound);
      if (target.email.toLowerCase() !== input.email.trim().toLowerCase())
        throw badRequest(USER_MESSAGES.emailReadOnly);
      const userlevel = input.userlevel ?? target.userlevel;
      const levelChanged = userlevel !== target.userlevel;
      if (levelChanged) {
        authorize(actor, 'users', 'changeLevel', { target: account, to: userlevel }, () =>
          forbidden(USER_MESSAGES.levelRaise),
        );
        if (target.userlevel === 'SUPERADMIN' && target.userstatus === 'ACTIVE') {
          if ((await countOtherActiveSuperadmins(trx, target.id)) === 0)
            throw forbidden(USER_MESSAGES.lastSuperadminLevel);
        }
      }
      const ids = await resolvePermissionIds(trx, input.permissions, userlevel);
      const phone = input.phone.trim();
      if (await phoneTakenByOther(trx, phone, target.id)) throw conflict(USER_MESSAGES.phoneTaken);
      await updateUserRow(trx, target.id, { phone, userlevel });
      await setUserPermissions(trx, target.id, ids);
      // Open sessions carry the old level's screens: the user signs in again with the new one's.
      const sessionsEnded = levelChanged
        ? await endUserSessions(trx, target.id, SESSION_END.levelChanged)
        : 0;
      await appendAudit(trx, {
        actor,
        action: 'user.update',
        target: target.email,
        address,
        result: 'success',
        details: {
          phone,
          userlevel,
          permissions: ids,
          ...(levelChanged ? { levelFrom: target.userlevel, sessionsEnded } : {}),
        },
      });
    });
  }

  async setUserStatus(
    { actor, address }: ActorContext,
    input: { email: string; status: UserStatus },
  ): Promise<void> {
    await withTarget(this.db, { email: input.email }, async (trx, target) => {
      assertManages(actor, userObject(target), USER_MESSAGES.notFound);
      if (input.status === 'INACTIVE' && target.userlevel === 'SUPERADMIN') {
        if ((await countOtherActiveSuperadmins(trx, target.id)) === 0)
          throw forbidden(USER_MESSAGES.lastSuperadmin);
      }
      await updateUserRow(trx, target.id, { userstatus: input.status });
      const disabling = input.status === 'INACTIVE';
      // Their batches pause with the disable (before their keys go, so the owner's reason is the one shown).
      if (disabling)
        await pauseBatchesOf(trx, { userId: target.id }, BATCH_PAUSE_REASONS.ownerDisabled, actor);
      const ended = disabling ? await endUserSessions(trx, target.id, SESSION_END.disabled) : 0;
      // Enabling the account again leaves its keys off: someone at the recorded level switches each back on.
      const keysDeactivated = disabling
        ? await deactivateKeysOf(trx, target, 'account disabled', { actor, address })
        : [];
      await appendAudit(trx, {
        actor,
        action: 'user.status',
        target: target.email,
        address,
        result: 'success',
        details: { from: target.userstatus, to: input.status, sessionsEnded: ended, keysDeactivated },
      });
    });
  }

  /** Ends every session of a user; with `deactivateKeys` (the console asks) also switches their keys off. */
  async forceLogout(
    { actor, address }: ActorContext,
    input: { email: string; deactivateKeys?: boolean | undefined },
  ): Promise<{ sessionsEnded: number; keysDeactivated: number[] }> {
    return withTarget(this.db, { email: input.email }, async (trx, target) => {
      assertManages(actor, userObject(target), USER_MESSAGES.notFound);
      if (target.userlevel === 'SUPERADMIN' && target.userstatus === 'ACTIVE') {
        if ((await countOtherActiveSuperadmins(trx, target.id)) === 0)
          throw forbidden(USER_MESSAGES.lastSuperadmin);
      }
      const sessionsEnded = await endUserSessions(trx, target.id, SESSION_END.forcedLogout);
      const keysDeactivated = input.deactivateKeys
        ? await deactivateKeysOf(trx, target, 'forced logout', { actor, address })
        : [];
      await appendAudit(trx, {
        actor,
        action: 'user.forceLogout',
        target: target.email,
        address,
        result: 'success',
        details: { sessionsEnded, keysDeactivated },
      });
      return { sessionsEnded, keysDeactivated };
    });
  }
}
