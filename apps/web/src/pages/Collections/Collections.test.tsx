// @vitest-environment happy-dom
/**
 * The Collections screen's parts as an operator sees them, rendered with Testing Library over a fake
 * API client: the policy editor (a SUPERADMIN saves a new version after a confirmation naming each change;
 * a bad field is refused with nothing sent; an ADMIN reads it with no control to save), the dry run of the
 * policy in the form (the call it makes, the counts it shows), Today's Plan (why a lock is held back) and
 * the kill switch (a reason required in its confirmation; only a SUPERADMIN resumes).
 */
import {
  COLLECTIONS_MESSAGES,
  type CollectionsPolicy,
  DEFAULT_COLLECTIONS_POLICY,
  emptyPlanCounts,
  type PlanItem,
  type Session,
} from '@lendlock/contract';
import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { fakeApi } from '../../test/fakeApi';
import { renderWithServices, TEST_SESSION } from '../../test/render';
import { KillSwitchCard } from './KillSwitchCard';
import { ACTION_LABELS, COLLECTIONS_LABELS as L, SKIP_LABELS } from './labels';
import { PlanView } from './PlanView';
import { PolicyTab } from './PolicyTab';

const SUPERADMIN: Session = { ...TEST_SESSION, userlevel: 'SUPERADMIN', email: 'root@lendlock.com' };
const ADMIN: Session = { ...TEST_SESSION, userlevel: 'ADMIN' };

const POLICY: CollectionsPolicy = { ...DEFAULT_COLLECTIONS_POLICY, enabled: true };

const item = (imei: string, action: PlanItem['action']): PlanItem => ({
  loanId: Number(imei.slice(-3)),
  loanRef: `LN-${imei.slice(-3)}`,
  imei,
  customerName: 'Asha Rao',
  retailerPhone: null,
  action,
  skipped: null,
  rule: 'collections draft: lock after 7 days overdue',
  dueDate: '2030-03-01',
  amount: '1499.50',
  currency: 'INR',
  daysOverdue: 8,
  done: false,
  failure: null,
});

function planReply(killSwitch = false) {
  const counts = emptyPlanCounts();
  counts.LOCK = 2;
  counts.PRE = 1;
  counts.skipped.promiseToPay = 3;
  return {
    status: 'success',
    date: '2030-03-09',
    timeZone: 'Asia/Kolkata',
    version: null,
    killSwitch,
    runsAt: '09:00',
    counts,
    items: [item('356938035643809', 'LOCK'), item('356938035643817', 'LOCK'), item('356938035643825', 'PRE')],
    cursor: null,
  };
}

/** A collections server: policy version 4, its history, the plan, and the kill switch. */
function server(options: { killSwitch?: boolean } = {}) {
  let on = options.killSwitch ?? false;
  let current = {
    status: 'success',
    version: 4,
    policy: POLICY as unknown,
    changedBy: 'root@lendlock.com',
    changedAt: '2030-03-01T10:00:00.000Z',
  };
  return fakeApi((script, body) => {
    const sent = body as Record<string, unknown> | undefined;
    switch (script) {
      case 'v2/collections/policy':
        if (sent?.policy) {
          current = { ...current, version: current.version + 1, policy: sent.policy };
          return { ...current, message: COLLECTIONS_MESSAGES.policySaved(current.version) };
        }
        return current;
      case 'v2/collections/policy/versions':
        return {
          status: 'success',
          items: [
            {
              version: 4,
              policy: POLICY,
              changedBy: 'root@lendlock.com',
              changedAt: '2030-03-01T10:00:00.000Z',
              changes: [{ field: 'enabled', from: false, to: true }],
            },
          ],
        };
      case 'v2/collections/plan':
        return planReply(on);
      case 'v2/collections/kill-switch':
        if (sent) {
          on = sent.on as boolean;
          return {
            status: 'success',
            message: on ? COLLECTIONS_MESSAGES.killSwitchOn : COLLECTIONS_MESSAGES.killSwitchOff,
            on,
            reason: sent.reason,
            changedBy: 'agent@lendlock.com',
            changedAt: '2030-03-09T10:00:00.000Z',
            cancelled: 2,
          };
        }
        return { status: 'success', on, reason: null, changedBy: null, changedAt: null };
      default:
        throw new Error(`unexpected call ${script}`);
    }
  });
}

beforeEach(() => {
  vi.stubGlobal(
    'confirm',
    vi.fn(() => true),
  );
  // happy-dom has no FontFaceSet; Mantine's autosizing Textarea listens to it.
  if (!('fonts' in document))
    Object.defineProperty(document, 'fonts', {
      configurable: true,
      value: { addEventListener: () => undefined, removeEventListener: () => undefined },
    });
});
afterEach(() => {
  cleanup();
  vi.unstubAllGlobals();
});

const field = (label: string) => screen.getByLabelText(label, { exact: false }) as HTMLInputElement;

// Typing into a form is slow on a busy machine: generous timeouts (no assertion is about speed).
describe('the policy editor', { timeout: 30_000 }, () => {
  it('a SUPERADMIN saves a new version after a confirmation that names each change', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<PolicyTab />, { api, session: SUPERADMIN });
    await screen.findByTestId('policy-fields');

    await user.clear(field(L.fields.lockAfterDaysOverdue));
    await user.type(field(L.fields.lockAfterDaysOverdue), '7');
    await user.click(field(L.fields.due));
    await user.click(screen.getByRole('button', { name: L.save }));

    const dialog = await screen.findByTestId('confirm-save');
    expect(
      within(dialog)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual(['Due reminder: on → off', 'Lock after days overdue: 5 → 7']);
    expect(calls.filter((c) => c.options.method === 'PUT')).toEqual([]);

    await user.click(within(dialog).getByRole('button', { name: L.confirmSave(5) }));
    expect(await screen.findByText(COLLECTIONS_MESSAGES.policySaved(5))).toBeTruthy();
    const put = calls.filter((c) => c.options.method === 'PUT');
    expect(put.map((c) => c.options.body)).toEqual([
      {
        policy: {
          ...POLICY,
          reminders: { ...POLICY.reminders, due: false },
          lockAfterDaysOverdue: 7,
        },
      },
    ]);
  });

  it('the minimum payment that puts a lock off: the dry run plans it, the save names it', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<PolicyTab />, { api, session: SUPERADMIN });
    await screen.findByTestId('policy-fields');
    expect(field(L.fields.pauseMinShare).value).toBe(String(POLICY.lockPause.minSharePercent));

    await user.type(field(L.fields.pauseMinAmount), '500');
    await user.clear(field(L.fields.pauseMinShare));
    await user.click(screen.getByRole('button', { name: L.runDryRun }));
    await screen.findByTestId('dry-run');
    const lockPause = { minAmount: '500', minSharePercent: null };
    const plan = calls.filter((c) => c.script === 'v2/collections/plan');
    expect(plan.map((c) => (c.options.body as { policy: unknown }).policy)).toEqual([
      { ...POLICY, lockPause },
    ]);

    await user.click(screen.getByRole('button', { name: L.save }));
    const dialog = await screen.findByTestId('confirm-save');
    expect(
      within(dialog)
        .getAllByRole('listitem')
        .map((li) => li.textContent),
    ).toEqual([
      'Minimum payment to put a lock off: none → 500',
      `Minimum share of the arrears to put a lock off: ${POLICY.lockPause.minSharePercent}% → none`,
    ]);
    await user.click(within(dialog).getByRole('button', { name: L.confirmSave(5) }));
    expect(await screen.findByText(COLLECTIONS_MESSAGES.policySaved(5))).toBeTruthy();
    expect(calls.filter((c) => c.options.method === 'PUT').map((c) => c.options.body)).toEqual([
      { policy: { ...POLICY, lockPause } },
    ]);
  });

  it('a bad field is named under it and nothing is sent; an unchanged form saves nothing', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<PolicyTab />, { api, session: SUPERADMIN });
    await screen.findByTestId('policy-fields');

    await user.clear(field(L.fields.postEveryDays));
    await user.type(field(L.fields.postEveryDays), '45');
    await user.type(field(L.fields.excludedImeis), '12345');
    await user.click(screen.getByRole('button', { name: L.save }));
    expect(await screen.findByText(L.wholeNumber(0, 30))).toBeTruthy();
    expect(screen.getByText(L.entryProblem(COLLECTIONS_MESSAGES.badImei, '12345'))).toBeTruthy();
    expect(screen.getByRole('alert').textContent).toBe(L.fixErrors);
    expect(screen.queryByTestId('confirm-save')).toBeNull();

    await user.click(screen.getByRole('button', { name: L.reset }));
    await user.click(screen.getByRole('button', { name: L.save }));
    expect(await screen.findByText(L.noChanges)).toBeTruthy();
    expect(calls.filter((c) => c.options.method === 'PUT')).toEqual([]);
  });

  it('an ADMIN reads the policy: every field disabled, no control to save', async () => {
    const { api } = server();
    renderWithServices(<PolicyTab />, { api, session: ADMIN });
    const fields = await screen.findByTestId('policy-fields');
    expect(screen.getByText(L.readOnly)).toBeTruthy();
    expect(screen.queryByRole('button', { name: L.save })).toBeNull();
    expect((fields as HTMLFieldSetElement).disabled).toBe(true);
    // The history still shows who changed what.
    const history = await screen.findByTestId('policy-history');
    expect(within(history).getByText('Policy: off → on')).toBeTruthy();
  });

  it('the dry run sends the policy in the form and the day, and shows the counts per action', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<PolicyTab />, { api, session: SUPERADMIN });
    await screen.findByTestId('policy-fields');

    await user.clear(field(L.fields.lockAfterDaysOverdue));
    await user.type(field(L.fields.lockAfterDaysOverdue), '7');
    const day = screen.getByLabelText(L.dryRunDate);
    await user.clear(day);
    await user.type(day, '2030-03-09');
    await user.click(screen.getByRole('button', { name: L.runDryRun }));

    const dryRun = await screen.findByTestId('dry-run');
    const plan = calls.filter((c) => c.script === 'v2/collections/plan');
    expect(plan.map((c) => c.options.body)).toEqual([
      {
        date: '2030-03-09',
        policy: { ...POLICY, lockAfterDaysOverdue: 7 },
        filter: 'ALL',
        limit: 200,
      },
    ]);
    const counts = within(dryRun).getByTestId('plan-counts');
    expect(within(counts).getByText(ACTION_LABELS.LOCK).nextElementSibling?.textContent).toBe('2');
    expect(within(counts).getByText(ACTION_LABELS.PRE).nextElementSibling?.textContent).toBe('1');
    const skips = within(dryRun).getByTestId('plan-skips');
    expect(within(skips).getByText(SKIP_LABELS.promiseToPay).nextElementSibling?.textContent).toBe('3');
    expect(within(dryRun).getByText(L.planTitle('2030-03-09', 'Asia/Kolkata'))).toBeTruthy();
    expect(within(dryRun).getByTestId('dry-run-shown').textContent).toBe(L.shown(3, false));
    expect(within(dryRun).queryByTestId('plan-halted')).toBeNull();
  });

  it('a dry run of an unchanged policy plans the saved one; a bad day is refused before any call', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<PolicyTab />, { api, session: ADMIN });
    await screen.findByTestId('policy-fields');
    const day = screen.getByLabelText(L.dryRunDate);
    await user.clear(day);
    await user.click(screen.getByRole('button', { name: L.runDryRun }));
    expect(await screen.findByText('Invalid day: expected a date as YYYY-MM-DD.')).toBeTruthy();
    expect(calls.filter((c) => c.script === 'v2/collections/plan')).toEqual([]);

    await user.type(day, '2030-03-09');
    await user.click(screen.getByRole('button', { name: L.runDryRun }));
    await screen.findByTestId('dry-run');
    expect(calls.filter((c) => c.script === 'v2/collections/plan').map((c) => c.options.body)).toEqual([
      { date: '2030-03-09', filter: 'ALL', limit: 200 },
    ]);
  });
});

describe('the kill switch', { timeout: 30_000 }, () => {
  it('an ADMIN stops collections: the confirmation needs a reason, then the server’s answer shows', async () => {
    const user = userEvent.setup();
    const { api, calls } = server();
    renderWithServices(<KillSwitchCard />, { api, session: ADMIN });
    const card = await screen.findByTestId('kill-switch');
    expect(within(card).getByTestId('kill-switch-state').textContent).toBe(L.running);

    await user.click(within(card).getByRole('button', { name: L.stop }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByText(L.stopText)).toBeTruthy();
    await user.click(within(dialog).getByRole('button', { name: L.confirmStop }));
    expect(await within(dialog).findByText(COLLECTIONS_MESSAGES.reasonRequired)).toBeTruthy();
    expect(calls.filter((c) => c.options.method === 'PUT')).toEqual([]);

    await user.type(within(dialog).getByLabelText(L.reason, { exact: false }), 'wrong due dates imported');
    await user.click(within(dialog).getByRole('button', { name: L.confirmStop }));
    expect((await screen.findByTestId('kill-switch-message')).textContent).toBe(
      `${COLLECTIONS_MESSAGES.killSwitchOn} ${L.cancelledQueued(2)}`,
    );
    expect(calls.filter((c) => c.options.method === 'PUT').map((c) => c.options.body)).toEqual([
      { on: true, reason: 'wrong due dates imported' },
    ]);
    await waitFor(() => expect(within(card).getByTestId('kill-switch-state').textContent).toBe(L.stopped));
    // Stopped: an ADMIN may not resume.
    expect(within(card).queryByRole('button', { name: L.resume })).toBeNull();
    expect(within(card).getByText(L.resumeSuperadminOnly)).toBeTruthy();
  });

  it('a SUPERADMIN resumes collections with a reason', async () => {
    const user = userEvent.setup();
    const { api, calls } = server({ killSwitch: true });
    renderWithServices(<KillSwitchCard />, { api, session: SUPERADMIN });
    const card = await screen.findByTestId('kill-switch');
    await user.click(within(card).getByRole('button', { name: L.resume }));
    const dialog = await screen.findByRole('dialog');
    await user.type(within(dialog).getByLabelText(L.reason, { exact: false }), 'dates fixed');
    await user.click(within(dialog).getByRole('button', { name: L.confirmResume }));
    expect((await screen.findByTestId('kill-switch-message')).textContent).toBe(
      COLLECTIONS_MESSAGES.killSwitchOff,
    );
    expect(calls.filter((c) => c.options.method === 'PUT').map((c) => c.options.body)).toEqual([
      { on: false, reason: 'dates fixed' },
    ]);
  });
});

describe('Today’s Plan', { timeout: 30_000 }, () => {
  it('says a lock is held back because an operator unlocked the device, and how many', async () => {
    const counts = emptyPlanCounts();
    counts.LOCK = 1;
    counts.skipped.operatorUnlock = 2;
    const { api, calls } = fakeApi((script) => {
      if (script !== 'v2/collections/plan') throw new Error(`unexpected call ${script}`);
      return {
        ...planReply(),
        version: 4,
        counts,
        items: [
          item('356938035643809', 'LOCK'),
          { ...item('356938035643817', 'LOCK'), skipped: 'operatorUnlock' },
          { ...item('356938035643825', 'LOCK'), skipped: 'operatorUnlock' },
        ],
      };
    });
    renderWithServices(<PlanView date={null} policy={null} policyEnabled testId="today-plan" level={2} />, {
      api,
      session: ADMIN,
    });
    const skips = await screen.findByTestId('plan-skips');
    const row = within(skips).getByText(SKIP_LABELS.operatorUnlock).closest('tr') as HTMLElement;
    expect(row.dataset.skip).toBe('operatorUnlock');
    expect(row.textContent).toBe(`${SKIP_LABELS.operatorUnlock}2`);
    expect(
      within(screen.getByTestId('plan-counts')).getByText(ACTION_LABELS.LOCK).nextElementSibling?.textContent,
    ).toBe('1');
    expect(calls.map((c) => c.script)).toEqual(['v2/collections/plan']);
  });
});
