/**
 * Sending a screen's single command: `locknotification.php` with the definition's action (or
 * `formattedDevice.php` for Formatted Device), the session email as `user`; on success the
 * definition's exact alert, otherwise the server's message as-is. When the session turned
 * out to have ended, nothing is alerted here: the console goes to /login, which says why and reports
 * the command not sent.
 */
import type { CommandDefinition, LockNotificationRequest } from '@lendlock/contract';
import { useMutation } from '@tanstack/react-query';
import { isSessionLost } from '../../api/client';
import { commandFailureText, sendCommand, sendFormattedDevice } from '../../api/commands';
import { useServices } from '../../app/services';
import { useSession } from '../../app/session/useSession';
import { COMMAND_LABELS } from './labels';

/** What the single form adds to the IMEI: the grade, or the notification's text and template. */
export type SingleCommandFields = Pick<LockNotificationRequest, 'imei' | 'level' | 'message' | 'caseType'>;

export interface SentCommand {
  transactionId: string;
  imei: string;
}

export function useSingleCommand(definition: CommandDefinition, onSent: (sent: SentCommand) => void) {
  const { api } = useServices();
  const user = useSession()?.email ?? '';
  const mutation = useMutation({
    mutationFn: (fields: SingleCommandFields) => {
      const sending = commandInWords(definition, fields.imei);
      return definition.action === 'formatteddevice'
        ? sendFormattedDevice(api, { imei: fields.imei, user }, { sending })
        : sendCommand(api, { ...fields, action: definition.action, user }, { sending });
    },
  });

  /** Sends unless the definition asks for a confirmation (Release) and the user declines. */
  const send = (fields: SingleCommandFields, onSuccess?: () => void) => {
    if (definition.confirm && !window.confirm(definition.confirm)) return;
    mutation.mutate(fields, {
      onSuccess: (reply) => {
        window.alert(definition.successMessage);
        onSent({ transactionId: reply.transactionId, imei: fields.imei });
        onSuccess?.();
      },
      onError: (error) => {
        if (!isSessionLost(error)) window.alert(commandFailureText(error));
      },
    });
  };

  return { send, pending: mutation.isPending };
}

/** A command as /login names it when it was not sent: 'Lock to IMEI 356…'. */
export function commandInWords(definition: Pick<CommandDefinition, 'displayName'>, imei: string): string {
  return COMMAND_LABELS.commandToImei(definition.displayName, imei);
}
