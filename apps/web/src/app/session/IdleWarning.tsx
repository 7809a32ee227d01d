/**
 * The warning a minute before the session's idle end (SESSION_IDLE_TIMEOUT): 'Your session will end in a
 * minute unless you continue.' with Stay signed in, which makes a cheap call (any call counts as use, so
 * the notice goes away by itself when the user goes on working). When the time has passed, the session
 * ends here as the server has ended it, noted `idle` (/login says why), and `onIdle` runs.
 */
import { MESSAGES } from '@lendlock/contract';
import { Alert, Button, Group, Text } from '@mantine/core';
import { useEffect, useState } from 'react';

/** How long before the idle end the warning shows. */
export const IDLE_WARNING_MS = 60_000;

export function IdleWarning(props: {
  idleTimeoutMs: number;
  /** The session's last use (epoch ms); null: none recorded yet, counted from when this mounted. */
  lastUsedAt: () => number | null;
  /** A cheap call with the session. */
  onStay: () => Promise<unknown>;
  /** The idle time passed: end the session, noted `idle`. */
  onIdle: () => void;
  intervalMs: number;
  now?: () => number;
}) {
  const { idleTimeoutMs, lastUsedAt, onStay, onIdle, intervalMs } = props;
  const now = props.now ?? Date.now;
  const [mountedAt] = useState(now);
  const [warn, setWarn] = useState(false);
  const [staying, setStaying] = useState(false);

  useEffect(() => {
    let ended = false;
    const check = () => {
      if (ended) return;
      const left = (lastUsedAt() ?? mountedAt) + idleTimeoutMs - now();
      if (left <= 0) {
        ended = true;
        onIdle();
        return;
      }
      setWarn(left <= IDLE_WARNING_MS);
    };
    check();
    const timer = setInterval(check, intervalMs);
    return () => clearInterval(timer);
  }, [idleTimeoutMs, lastUsedAt, onIdle, intervalMs, now, mountedAt]);

  if (!warn) return null;
  const stay = async () => {
    setStaying(true);
    try {
      await onStay();
      setWarn(false);
    } catch {
      // A refused call ends the session itself (the API client); a network failure leaves the notice.
    } finally {
      setStaying(false);
    }
  };
  return (
    <Alert color="yellow" mb="md" role="alert" data-testid="idle-warning">
      <Group justify="space-between" wrap="wrap">
        <Text size="sm">{MESSAGES.sessionIdleWarning}</Text>
        <Button size="xs" onClick={stay} loading={staying}>
          {MESSAGES.sessionStaySignedIn}
        </Button>
      </Group>
    </Alert>
  );
}
