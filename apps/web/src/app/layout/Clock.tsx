import { Text } from '@mantine/core';
import { useEffect, useState } from 'react';
import { formatLocalDateTime } from '../../lib/datetime';
import { LABELS } from '../../lib/labels';

/** The live clock of the layout's top bar, ticking every second. */
export function Clock() {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const timer = setInterval(() => setNow(new Date()), 1000);
    return () => clearInterval(timer);
  }, []);
  return (
    <Text
      component="time"
      dateTime={now.toISOString()}
      aria-label={LABELS.currentTime}
      data-testid="clock"
      ff="monospace"
    >
      {formatLocalDateTime(now)}
    </Text>
  );
}
