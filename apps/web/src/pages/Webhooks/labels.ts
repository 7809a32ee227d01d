/** Headings, columns and buttons of the Webhooks screen (not a screen of the spec). */
import { MESSAGES } from '@lendlock/contract';
import { ApiError, NetworkError } from '../../api/client';

export const WEBHOOK_LABELS = {
  addEndpoint: 'Add endpoint',
  url: 'URL',
  description: 'Description',
  events: 'Events',
  endpoints: 'Webhook endpoints',
  createdBy: 'Created By',
  status: 'Status',
  action: 'Action',
  enabled: 'Enabled',
  disabled: 'Disabled',
  enable: 'Enable',
  disable: 'Disable',
  delete: 'Delete',
  confirmDelete: (url: string) =>
    `Delete the endpoint ${url}? Deliveries not yet made to it are given up. This cannot be undone.`,
  deliveries: 'Deliveries',
  noEndpoints: 'No webhook endpoints yet.',
  noDeliveries: 'No deliveries.',
  event: 'Event',
  messageId: 'Webhook Id',
  statusCode: 'HTTP Status',
  attempts: 'Attempts',
  nextTry: 'Next Try',
  createdAt: 'Created At',
  replay: 'Replay',
  replayOf: (messageId: string) => `Replay ${messageId}`,
  all: 'All',
  signingSecret: 'Signing secret',
  copy: 'Copy secret',
  copied: 'Copied',
  dismiss: 'Dismiss',
  urlRequired: 'Enter the endpoint URL.',
  eventsRequired: 'Choose at least one event.',
} as const;

/** A call failed: the server's message, 'Please try after sometime.' offline. */
export function webhookFailureText(error: unknown): string {
  if (error instanceof ApiError && error.serverMessage) return error.serverMessage;
  if (error instanceof NetworkError) return MESSAGES.tryAfterSometimeDot;
  return MESSAGES.cannotFetch;
}
