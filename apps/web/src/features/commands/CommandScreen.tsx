/**
 * The one command screen: every screen with a row in COMMAND_DEFINITIONS (and the `batch`
 * alias of Set Wallpaper) renders this, driven by its row. Left the single form (when the row has one),
 * right the batch card, under them the live status of the last command sent; for a retailer user, the
 * dynamic action table.
 */
import { type CommandDefinition, commandForScreen, type Screen, type ScreenName } from '@lendlock/contract';
import { Card, Grid, Stack, Title } from '@mantine/core';
import { useState } from 'react';
import { PageTitle } from '../../app/layout/PageTitle';
import { useSession } from '../../app/session/useSession';
import { BatchPanel } from '../batch/BatchPanel';
import { LiveStatus } from './CommandStatus';
import { DynamicActionTable } from './DynamicActionTable';
import { ImeiCommandForm } from './ImeiCommandForm';
import { COMMAND_LABELS } from './labels';
import { NotifyForm } from './NotifyForm';
import type { SentCommand } from './useSingleCommand';

export default function CommandScreen({ screen }: { screen: Screen }) {
  const definition = commandForScreen(screen.name as ScreenName);
  const session = useSession();
  if (!definition) throw new Error(`No command definition for the screen ${screen.name}`);

  return (
    <Stack gap="md">
      <PageTitle screen={screen} />
      <Grid gap="md">
        {definition.single ? (
          <Grid.Col span={{ base: 12, md: 6 }}>
            <SingleCommandCard definition={definition} />
          </Grid.Col>
        ) : null}
        {definition.batch ? (
          <Grid.Col span={{ base: 12, md: definition.single ? 6 : 12 }}>
            <BatchPanel definition={definition} />
          </Grid.Col>
        ) : null}
      </Grid>
      {session?.retailer_phone ? <DynamicActionTable retailerPhone={session.retailer_phone} /> : null}
    </Stack>
  );
}

function SingleCommandCard({ definition }: { definition: CommandDefinition }) {
  const [sent, setSent] = useState<SentCommand | null>(null);
  const Form = definition.input === 'notify' ? NotifyForm : ImeiCommandForm;
  return (
    <Card withBorder padding="md" data-testid="single-form">
      <Title order={4} mb="sm">
        {COMMAND_LABELS.single}
      </Title>
      <Form definition={definition} onSent={setSent} />
      {sent ? (
        <LiveStatus
          key={sent.transactionId}
          transactionId={sent.transactionId}
          label={COMMAND_LABELS.sentTo(definition.displayName, sent.imei)}
        />
      ) : null}
    </Card>
  );
}
