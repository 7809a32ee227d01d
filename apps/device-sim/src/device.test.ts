import type { AckMessage, CommandMessage } from '@lendlock/contract';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SimulatedDevice } from './device';
import { profileFor } from './fleet';
import { rng } from './imei';
import { HISTORY_LIMIT, REMEMBER_AT_LEAST_MS, REMEMBERED_IDS } from './recent';

/** A device with no broker: commands reach it as MQTT would hand them to its message handler. */
function device(): { agent: SimulatedDevice; deliver: (message: CommandMessage) => void } {
  const agent = new SimulatedDevice(profileFor(1, 0, rng(1)), {
    server: 'http://127.0.0.1:1',
    enrollmentSecret: 'x',
  });
  const handler = (agent as unknown as { onCommand(payload: Buffer): void }).onCommand.bind(agent);
  return { agent, deliver: (message) => handler(Buffer.from(JSON.stringify(message))) };
}

const command = (n: number): CommandMessage => ({
  id: `cmd-${n}`,
  command: n % 2 === 0 ? 'LOCK' : 'UNLOCK',
  options: {},
  issuedAt: new Date().toISOString(),
});

const lastAck = (agent: SimulatedDevice): AckMessage | undefined => agent.acks.at(-1);

describe('SimulatedDevice memory stays bounded', () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  });
  afterEach(() => vi.useRealTimers());

  it('keeps the last HISTORY_LIMIT messages and acknowledgements, and counts them all', () => {
    const { agent, deliver } = device();
    const total = HISTORY_LIMIT * 2 + 500;
    for (let n = 1; n <= total; n++) {
      deliver(command(n));
      vi.advanceTimersByTime(1000);
    }
    expect(agent.received).toHaveLength(HISTORY_LIMIT);
    expect(agent.acks).toHaveLength(HISTORY_LIMIT);
    expect(agent.received.at(0)?.id).toBe(`cmd-${total - HISTORY_LIMIT + 1}`);
    expect(agent.received.at(-1)?.id).toBe(`cmd-${total}`);
    expect(lastAck(agent)).toMatchObject({ id: `cmd-${total}`, status: 'EXECUTED' });
    expect(agent.receivedCount).toBe(total);
    expect(agent.executedCount).toBe(total);
    expect(agent.executions.size).toBe(REMEMBERED_IDS);
  });

  it('still answers a recent id "already executed" and does not execute it twice', () => {
    const { agent, deliver } = device();
    for (let n = 1; n <= 3000; n++) {
      deliver(command(n));
      vi.advanceTimersByTime(1000);
    }
    const state = agent.state;
    deliver(command(2500));
    expect(lastAck(agent)).toEqual({ id: 'cmd-2500', status: 'EXECUTED', state, result: 'already executed' });
    expect(agent.executions.get('cmd-2500')).toBe(1);
    expect(agent.executedCount).toBe(3000);
    expect(agent.state).toEqual(state);
  });

  it('remembers every id of the last REMEMBER_AT_LEAST_MS, however many arrived', () => {
    const { agent, deliver } = device();
    const burst = REMEMBERED_IDS * 2;
    for (let n = 1; n <= burst; n++) deliver(command(n));
    expect(agent.executions.size).toBe(burst);
    // The server resends the very first one within its resend window: answered, not executed again.
    vi.advanceTimersByTime(30_000);
    deliver(command(1));
    expect(lastAck(agent)).toMatchObject({ id: 'cmd-1', status: 'EXECUTED', result: 'already executed' });
    expect(agent.executedCount).toBe(burst);
    // Long after, the next command lets the old ones go: back to REMEMBERED_IDS.
    vi.advanceTimersByTime(REMEMBER_AT_LEAST_MS);
    deliver(command(burst + 1));
    expect(agent.executions.size).toBe(REMEMBERED_IDS);
    expect(agent.executions.has('cmd-1')).toBe(false);
  });
});
