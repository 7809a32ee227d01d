import { Center, Paper, Stack, Title } from '@mantine/core';
import type { ReactNode } from 'react';

/** The centred card of the signed-out pages (login, forgot and reset password). */
export function AuthCard({
  title,
  subtitle,
  children,
}: {
  title: string;
  subtitle?: string;
  children: ReactNode;
}) {
  return (
    <Center mih="100vh" p="md">
      <Paper withBorder shadow="sm" p="xl" radius="md" w="100%" maw={420}>
        <Stack gap="md">
          <Title order={1} size="h2">
            {title}
          </Title>
          {subtitle ? (
            <Title order={2} size="h4" c="dimmed">
              {subtitle}
            </Title>
          ) : null}
          {children}
        </Stack>
      </Paper>
    </Center>
  );
}
