/**
 * Commands (design.md §5, "authority follows the command"): a command is seen by who may see its device;
 * issuing one needs its screen's permission; cancelling a pending one also needs a level at least that of
 * whoever issued it.
 */
import type { Principal } from '../../plugins/auth';
import { type IssuerLevel, mayCancelIssuedBy, mayUseCommand } from '../authority';
import { sees, type Tenant, tenantScope } from '../tenancy';

export interface CommandObject {
  /** Its device's tenant. */
  readonly retailerPhone: Tenant;
  readonly raw: string;
  readonly issuer: IssuerLevel;
}

export const commands = {
  scope: tenantScope,
  read: (p: Principal, command: Pick<CommandObject, 'retailerPhone'>) => sees(p, command.retailerPhone),
  issue: (p: Principal, command: Pick<CommandObject, 'retailerPhone' | 'raw'>) =>
    sees(p, command.retailerPhone) && mayUseCommand(p, command.raw),
  cancel: (p: Principal, command: CommandObject) =>
    sees(p, command.retailerPhone) && mayUseCommand(p, command.raw) && mayCancelIssuedBy(p, command.issuer),
};
