/** A secret the server shows once (an API key, a webhook signing secret), with a copy button. */
import { Alert, Button, Code, CopyButton, Group, Stack, Text } from '@mantine/core';

export interface OneTimeSecretProps {
  title: string;
  message: string;
  secret: string;
  labels: { copy: string; copied: string; dismiss: string };
  onDismiss: () => void;
  /** data-testid of the notice and of the secret itself. */
  testIds: { notice: string; secret: string };
}

export function OneTimeSecret({ title, message, secret, labels, onDismiss, testIds }: OneTimeSecretProps) {
  return (
    <Alert
      color="green"
      title={title}
      withCloseButton
      closeButtonLabel={labels.dismiss}
      onClose={onDismiss}
      data-testid={testIds.notice}
    >
      <Stack gap="xs">
        <Text size="sm">{message}</Text>
        <Group gap="sm" wrap="nowrap">
          <Code data-testid={testIds.secret} style={{ wordBreak: 'break-all' }}>
            {secret}
          </Code>
          <CopyButton value={secret} timeout={2000}>
            {({ copied, copy }) => (
              <Button size="compact-sm" color={copied ? 'teal' : 'blue'} onClick={copy}>
                {copied ? labels.copied : labels.copy}
              </Button>
            )}
          </CopyButton>
        </Group>
      </Stack>
    </Alert>
  );
}
