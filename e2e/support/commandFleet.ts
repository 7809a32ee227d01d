/**
 * Support for the command browser tests: a template database with extra accounts (e.g. a retailer user,
 * which only the CLI can give a retailer phone), a plain-JSON API session to arrange a device's state
 * before the console acts on it, a wait helper and a recorder of the page's alerts and confirms.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dialog, Locator, Page } from 'playwright-core';
import { API_KEY_HEADER } from '../../apps/web/src/api/client';
import { runCli } from './server';
import { PASSWORD, type TestUser } from './users';

export interface RetailerTestUser extends TestUser {
  retailerPhone: string;
}

/** A copy of the template database with `users` added; `dispose` removes it. */
export async function templateWithUsers(
  templateDataDir: string,
  users: RetailerTestUser[],
): Promise<{ dir: string; dispose(): void }> {
  const dir = mkdtempSync(join(tmpdir(), 'lendlock-e2e-commands-'));
  cpSync(templateDataDir, dir, { recursive: true });
  for (const user of users) {
    const args = ['user', 'create', '--email', user.email, '--phone', user.phone, '--level', user.level];
    args.push('--password', PASSWORD, '--retailer-phone', user.retailerPhone);
    if (user.permissions.length > 0) args.push('--permissions', user.permissions.join(','));
    await runCli(dir, args);
  }
  return { dir, dispose: () => rmSync(dir, { recursive: true, force: true }) };
}

export interface ApiSession {
  token: string;
  /** POST `/api/<path>` as this user in plain JSON; resolves with the HTTP status and the body. */
  post(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> }>;
}

/** Signs in over the API (plain JSON, as an integrator would) for arranging and checking state. */
export async function apiSession(baseUrl: string, email: string): Promise<ApiSession> {
  const post = async (path: string, body: unknown, token?: string) => {
    const response = await fetch(`${baseUrl}/api/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { [API_KEY_HEADER]: token } : {}) },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const login = await post('login.php', { email, password: PASSWORD });
  if (login.status !== 200) throw new Error(`API sign-in of ${email} failed: ${JSON.stringify(login.body)}`);
  const token = String(login.body.token);
  return { token, post: (path, body) => post(path, body, token) };
}

export interface SeenDialog {
  type: string;
  message: string;
}

/**
 * The next `count` dialogs of `page`, in order: alerts are accepted, confirms accepted or dismissed as
 * `confirm` says. Start it before the action that opens them.
 */
export function nextDialogs(
  page: Page,
  count: number,
  confirm: 'accept' | 'dismiss' = 'accept',
  timeoutMs = 15_000,
): Promise<SeenDialog[]> {
  return new Promise((resolve, reject) => {
    const seen: SeenDialog[] = [];
    const timer = setTimeout(() => {
      page.off('dialog', onDialog);
      reject(new Error(`saw ${seen.length} of ${count} dialogs: ${JSON.stringify(seen)}`));
    }, timeoutMs);
    const onDialog = (dialog: Dialog) => {
      seen.push({ type: dialog.type(), message: dialog.message() });
      const answer =
        dialog.type() === 'confirm' && confirm === 'dismiss' ? dialog.dismiss() : dialog.accept();
      answer.catch(() => undefined);
      if (seen.length === count) {
        clearTimeout(timer);
        page.off('dialog', onDialog);
        resolve(seen);
      }
    };
    page.on('dialog', onDialog);
  });
}

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The input labelled `label` inside `scope` (Mantine appends an aria-hidden ' *' to required labels). */
export function labelledIn(scope: Page | Locator, label: string): Locator {
  return scope.getByLabel(new RegExp(`^${escapeRegExp(label)}( \\*)?$`));
}
