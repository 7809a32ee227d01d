/**
 * Cancel: a command not yet sent (QUEUED) is cancelled by a principal with authority over it
 * (authz/resources/commands.ts `cancel`), and the desired state of its key falls back to what still stands on it.
 */

import { MESSAGES } from '@lendlock/contract';
import type { Kysely } from 'kysely';
import { may } from '../../authz';
import { issuerLevel } from '../../authz/issuer';
import { AppError, forbidden, notFound } from '../../core/errors';
import type { Principal } from '../../core/principal';
import { inTransaction } from '../../db/transaction';
import type { DB } from '../../db/types';
import { appendAudit } from '../audit/repository';
import { findDevice } from '../devices/repository';
import { commandEvents, type EventSink, NO_EVENTS } from '../webhooks/events';
import { recomputeDesired } from './desired';
import { COMMAND_MESSAGES } from './messages';
import { cancelQueued, findCommandWithIssuer } from './repository';

/**
 * Cancels a command not yet sent, for a principal with authority over it: the permission of the
 * command's screen, and a level at least the issuer's. Every attempt on a command the caller can see is
 * audited, refused or not, with who issued it.
 */
export async function cancelCommand(
  db: Kysely<DB>,
  transactionId: string,
  actor: Principal,
  address: string,
  events: EventSink = NO_EVENTS,
): Promise<void> {
  const command = await findCommandWithIssuer(db, transactionId);
  if (!command) throw notFound(COMMAND_MESSAGES.noSuchCommand);
  const device = await findDevice(db, command.imei1);
  const object = {
    retailerPhone: device?.retailer_phone ?? null,
    raw: command.command,
    issuer: { userId: command.user_id, level: command.issuer_level },
  };
  // A command the caller may not see is unknown to it, as an id that names nothing.
  if (!may(actor, 'commands', 'read', object)) throw notFound(COMMAND_MESSAGES.noSuchCommand);
  const issuer = issuerLevel(command.user_id, command.issuer_level);
  const audit = (result: string, reason?: string, into: Kysely<DB> = db) =>
    appendAudit(into, {
      actor,
      action: 'command.cancel',
      target: command.imei1,
      address,
      result,
      details: {
        transactionId,
        command: command.command,
        imei: command.imei1,
        issuer: { user: command.user_label, userId: command.user_id, keyId: command.key_id, level: issuer },
        ...(reason ? { reason } : {}),
      },
    });
  const refusal = !may(actor, 'commands', 'use', object)
    ? forbidden(MESSAGES.unauthorised)
    : !may(actor, 'commands', 'cancel', object)
      ? forbidden(COMMAND_MESSAGES.higherLevel)
      : null;
  if (refusal) {
    await audit('REFUSED', refusal.message);
    throw refusal;
  }
  const cancelled = await inTransaction(db, async (trx) => {
    const row = await cancelQueued(trx, transactionId);
    if (row) {
      await recomputeDesired(trx, row.imei1, row.command);
      // The cancel, its audit row and its webhook event commit together.
      await audit('CANCELLED', undefined, trx);
      await events.emit(trx, commandEvents([row]));
    }
    return row;
  });
  if (cancelled) events.wake();
  if (!cancelled) {
    await audit('ALREADY_SENT');
    throw new AppError(409, 'CONFLICT', COMMAND_MESSAGES.alreadySent);
  }
}
