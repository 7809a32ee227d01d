/** Headings, columns and buttons of Key Management that the spec does not word. */
import type { KeyStatus } from '@lendlock/contract';

export const KEY_LABELS = {
  keyName: 'Key Name',
  generateKey: 'Generate Key',
  newKey: 'New API key',
  copy: 'Copy key',
  copied: 'Copied',
  owner: 'Owner',
  status: 'Status',
  createdAt: 'Created At',
  lastUsed: 'Last Used',
  action: 'Action',
  never: 'Never',
  noKeys: 'No API keys yet.',
  dismiss: 'Dismiss',
  confirmPassword: 'Confirm your password',
  confirmPasswordHint: 'Type your password again to generate the key.',
  password: 'Password',
  cancel: 'Cancel',
  statusAction: (status: KeyStatus) => (status === 'active' ? 'Deactivate' : 'Activate'),
  statusActionOf: (status: KeyStatus, keyName: string) =>
    `${status === 'active' ? 'Deactivate' : 'Activate'} ${keyName}`,
} as const;
