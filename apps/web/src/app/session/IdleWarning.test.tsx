// @vitest-environment happy-dom
/**
 * The warning before an idle end as the user sees it: nothing while more than a minute is left; then
 * 'Your session will end in a minute unless you continue.' with Stay signed in, whose call keeps the
 * session and takes the notice away; other use takes it away too; left alone, the session ends (`idle`).
 * The clock is the test's: `now` is moved, and the check's interval runs on fake timers.
 */
import { MESSAGES } from '@lendlock/contract';
import { MantineProvider } from '@mantine/core';
import { act, cleanup, fireEvent, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { IdleWarning } from './IdleWarning';

const IDLE = 30 * 60_000;

describe('IdleWarning', () => {
  let clock: number;
  let lastUse: number;
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    clock = Date.parse('2030-01-01T09:00:00.000Z');
    lastUse = clock;
  });
  afterEach(() => {
    cleanup();
    vi.useRealTimers();
  });

  /** Moves the clock to `ms` after the last use and lets the check run. */
  const at = (ms: number) =>
    act(() => {
      clock = lastUse + ms;
      vi.advanceTimersByTime(1000);
    });

  const show = (onStay: () => Promise<unknown>, onIdle = vi.fn()) => {
    render(
      <MantineProvider>
        <IdleWarning
          idleTimeoutMs={IDLE}
          lastUsedAt={() => lastUse}
          onStay={onStay}
          onIdle={onIdle}
          intervalMs={1000}
          now={() => clock}
        />
      </MantineProvider>,
    );
    return onIdle;
  };

  it('warns a minute before, and Stay signed in makes a call that keeps the session', async () => {
    const onStay = vi.fn(async () => {
      lastUse = clock;
    });
    const onIdle = show(onStay);
    at(IDLE - 61_000);
    expect(screen.queryByTestId('idle-warning')).toBeNull();
    at(IDLE - 59_000);
    expect(screen.getByRole('alert').textContent).toContain(MESSAGES.sessionIdleWarning);

    await act(async () => {
      fireEvent.click(screen.getByRole('button', { name: MESSAGES.sessionStaySignedIn }));
    });
    expect(onStay).toHaveBeenCalledTimes(1);
    expect(screen.queryByTestId('idle-warning')).toBeNull();
    // Counted from the call: no warning for the next 29 minutes, and no end.
    at(IDLE - 61_000);
    expect(screen.queryByTestId('idle-warning')).toBeNull();
    expect(onIdle).not.toHaveBeenCalled();
  });

  it('any other call takes the warning away', () => {
    const onIdle = show(vi.fn(async () => {}));
    at(IDLE - 30_000);
    expect(screen.getByTestId('idle-warning')).toBeTruthy();
    act(() => {
      lastUse = clock;
      vi.advanceTimersByTime(1000);
    });
    expect(screen.queryByTestId('idle-warning')).toBeNull();
    expect(onIdle).not.toHaveBeenCalled();
  });

  it('left alone, the session ends when the idle time has passed, once', () => {
    const onIdle = show(vi.fn(async () => {}));
    at(IDLE - 1_000);
    expect(onIdle).not.toHaveBeenCalled();
    at(IDLE);
    expect(onIdle).toHaveBeenCalledTimes(1);
    at(IDLE + 5_000);
    expect(onIdle).toHaveBeenCalledTimes(1);
  });
});
