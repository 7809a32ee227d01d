/** The key just generated, shown this once (only its hash is stored) with a copy button. */
import { Alert, Button, Code, CopyButton, Group, Stack, Text } from '@mantine/core';
import type { GeneratedKey } from '../../api/keys';
import { KEY_LABELS } from './labels';

export function NewKeyNotice({ created, onDismiss }: { created: GeneratedKey; onDismiss: () => void }) {
  return (
    <Alert
      color="green"
      title={KEY_LABELS.newKey}
      withCloseButton
      closeButtonLabel={KEY_LABELS.dismiss}
      onClose={onDismiss}
      data-testid="new-key-notice"
    >
      <Stack gap="xs">
        <Text size="sm">{created.message}</Text>
        <Group gap="sm" wrap="nowrap">
          <Code data-testid="new-key" style={{ wordBreak: 'break-all' }}>
            {created.key}
          </Code>
          <CopyButton value={created.key} timeout={2000}>
            {({ copied, copy }) => (
              <Button size="compact-sm" color={copied ? 'teal' : 'blue'} onClick={copy}>
                {copied ? KEY_LABELS.copied : KEY_LABELS.copy}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
    </Alert>
  );
}
