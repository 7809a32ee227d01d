/**
 * The desired state after a command falls: a cancelled or failed command no longer decides its key, and
 * the key falls back to what the commands still standing on it say (else the initial state).
 */
import { applyCommand, INITIAL_DEVICE_STATE, type RawCommand, stateKeyOf } from '@lendlock/contract';
import type { Transaction } from 'kysely';
import type { DB } from '../../db/types';
import { lockDevice, setDesiredKey } from '../devices/repository';
import { latestStandingCommand } from './repository';

/**
 * Re-derives the desired value of the key `command` sets, and who decided it, from the commands still
 * standing on it (a command recorded before 0029 has no cause: collections' if its interface is `C`).
 */
export async function recomputeDesired(
  trx: Transaction<DB>,
  imei1: string,
  command: RawCommand,
): Promise<void> {
  const key = stateKeyOf(command);
  if (!key) return;
  const device = await lockDevice(trx, imei1);
  if (!device) return;
  const standing = await latestStandingCommand(trx, imei1, key);
  const value = standing
    ? applyCommand(INITIAL_DEVICE_STATE, standing.command, standing.options ?? {})[key]
    : INITIAL_DEVICE_STATE[key];
  const decided = standing
    ? {
        cause: standing.cause ?? (standing.interface === 'C' ? 'collections' : 'operator'),
        at: new Date(standing.created_at),
      }
    : null;
  await setDesiredKey(trx, imei1, key, value, decided);
}
