/** Page helpers for the console's tables, modals and browser dialogs (alert and confirm). */
import type { Locator, Page } from 'playwright-core';

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The input labelled `label` inside `scope` (Mantine appends an aria-hidden ' *' to required labels). */
export function labelled(scope: Page | Locator, label: string): Locator {
  return scope.getByLabel(new RegExp(`^${escapeRegExp(label)}( \\*)?$`));
}

/** The table row that has a cell reading exactly `text`. */
export function rowWith(page: Page, text: string): Locator {
  return page.getByRole('row').filter({ has: page.getByRole('cell', { name: text, exact: true }) });
}

export interface SeenDialog {
  type: string;
  message: string;
}

export interface Dialogs {
  /** Whether the next confirm() is accepted (alerts are always accepted). */
  confirm: 'accept' | 'dismiss';
  /** Answers for the next confirm()s, taken in order before `confirm` applies (a flow that asks twice). */
  readonly plan: ('accept' | 'dismiss')[];
  /** Every dialog seen so far, in order. */
  readonly seen: SeenDialog[];
  /** The next dialog not yet taken (one already shown, or the next to come). */
  next(timeoutMs?: number): Promise<SeenDialog>;
}

/** Answers every alert and confirm of `page` and queues what they said, so no dialog is missed. */
export function watchDialogs(page: Page): Dialogs {
  const queued: SeenDialog[] = [];
  const waiting: ((dialog: SeenDialog) => void)[] = [];
  const dialogs: Dialogs = {
    confirm: 'accept',
    plan: [],
    seen: [],
    next(timeoutMs = 15_000) {
      const ready = queued.shift();
      if (ready) return Promise.resolve(ready);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.splice(waiting.indexOf(take), 1);
          reject(new Error(`no dialog within ${timeoutMs} ms`));
        }, timeoutMs);
        const take = (dialog: SeenDialog) => {
          clearTimeout(timer);
          resolve(dialog);
        };
        waiting.push(take);
      });
    },
  };
  page.on('dialog', (dialog) => {
    const seen = { type: dialog.type(), message: dialog.message() };
    dialogs.seen.push(seen);
    const planned = dialog.type() === 'confirm' ? dialogs.plan.shift() : undefined;
    const answer =
      dialog.type() === 'confirm' && (planned ?? dialogs.confirm) === 'dismiss'
        ? dialog.dismiss()
        : dialog.accept();
    answer.catch(() => undefined);
    const waiter = waiting.shift();
    if (waiter) waiter(seen);
    else queued.push(seen);
  });
  return dialogs;
}
