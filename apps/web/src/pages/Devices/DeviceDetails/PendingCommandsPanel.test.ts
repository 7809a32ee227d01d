/**
 * The Cancel button of the pending commands (`confirmAndCancel`, the steps the button runs): it asks
 * first, naming the command and the IMEI; a declined confirmation sends nothing; the server's answer or
 * refusal is alerted. The web project has no DOM: e2e/devices.test.ts clicks the button in Chromium.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../api/client';
import { DEVICE_LABELS as L } from '../../../features/devices/labels';
import { type CancelSteps, confirmAndCancel } from './PendingCommandsPanel';

const IMEI = '356938035643809';
const COMMAND = { transactionId: 'a1b2c3', command: 'GREYAPP' };

function steps(answer: boolean, reply: () => Promise<{ message: string }>) {
  const seen = { questions: [] as string[], alerts: [] as string[], cancels: [] as string[], refetches: 0 };
  const run: CancelSteps = {
    confirm: (question) => {
      seen.questions.push(question);
      return answer;
    },
    alert: (message) => seen.alerts.push(message),
    cancel: (transactionId) => {
      seen.cancels.push(transactionId);
      return reply();
    },
    refetch: async () => {
      seen.refetches += 1;
    },
  };
  return { seen, run };
}

describe('Cancel a pending command (confirmAndCancel)', () => {
  it('asks with the command as the console shows it and the IMEI', () => {
    expect(L.confirmCancel('DISABLE APP', IMEI)).toBe(
      `Cancel the pending DISABLE APP command for IMEI ${IMEI}? It will not be sent to the device.`,
    );
  });

  it('a declined confirmation sends nothing', async () => {
    const { seen, run } = steps(false, async () => ({ message: 'Command cancelled' }));
    expect(await confirmAndCancel(IMEI, COMMAND, run)).toBe(false);
    expect(seen).toEqual({
      questions: [L.confirmCancel('DISABLE APP', IMEI)],
      alerts: [],
      cancels: [],
      refetches: 0,
    });
  });

  it('an accepted one cancels that command and alerts the answer', async () => {
    const { seen, run } = steps(true, async () => ({ message: 'Command cancelled' }));
    expect(await confirmAndCancel(IMEI, COMMAND, run)).toBe(true);
    expect(seen).toEqual({
      questions: [L.confirmCancel('DISABLE APP', IMEI)],
      alerts: ['Command cancelled'],
      cancels: ['a1b2c3'],
      refetches: 1,
    });
  });

  it("a refusal is alerted as the server words it (a higher level's command)", async () => {
    const refusal = 'You cannot cancel a command issued by a higher level.';
    const { seen, run } = steps(true, () =>
      Promise.reject(new ApiError(403, { status: 'error', code: 'FORBIDDEN', message: refusal })),
    );
    await confirmAndCancel(IMEI, COMMAND, run);
    expect(seen.alerts).toEqual([refusal]);
    expect(seen.refetches).toBe(1);
  });
});
