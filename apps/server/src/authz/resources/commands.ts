/**
 * Commands (authority follows the command). A command belongs to its device's tenant.
 * It is seen (its status by transaction id) by who may see its device and either issued it, may issue a
 * command of its kind, or may read the device's commands (Device Details); to anyone else it is unknown.
 * Issuing one needs the permission of its screen (the device's tenant is the scope the issue applies:
 * another tenant's device is not found); cancelling a pending one also needs a level at least that of
 * whoever issued it.
 */
import type { ScreenName, UserLevel } from '@lendlock/contract';
import { hasPermission, type Principal } from '../../core/principal';
import { mayCancelIssuedBy, mayUseAnyScreen, mayUseCommand } from '../authority';
import { issuerLevel } from '../issuer';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface CommandObject {
  /** Its device's tenant. */
  readonly retailerPhone: Tenant;
  readonly raw: string;
  /** Who issued it: a user and their current level (null user: the system). */
  readonly issuer: { readonly userId: number | null; readonly level: UserLevel | null };
}

const read = (p: Principal, command: CommandObject) =>
  sees(p, command.retailerPhone) &&
  (command.issuer.userId === p.userId || hasPermission(p, 'deviceDetails') || mayUseCommand(p, command.raw));

/** The permission of a command's screen. */
const use = (p: Principal, command: Pick<CommandObject, 'raw'>) => mayUseCommand(p, command.raw);

export const commands = {
  /** The devices a principal's commands may reach, and whose commands its lists show. */
  scope: tenantScope,
  read,
  use,
  /** A new command, by the screens whose permission admits it (Graded Disable App: either of two). */
  issue: (p: Principal, command: { readonly screens: readonly ScreenName[] }) =>
    mayUseAnyScreen(p, command.screens),
  /** The dynamic action table of a retailer's user: only for its own retailer. */
  actForRetailer: (p: Principal, target: { readonly retailerPhone: Tenant }) =>
    p.retailerPhone !== null && p.retailerPhone === target.retailerPhone,
  cancel: (p: Principal, command: CommandObject) =>
    read(p, command) &&
    use(p, command) &&
    mayCancelIssuedBy(p, issuerLevel(command.issuer.userId, command.issuer.level)),
};
