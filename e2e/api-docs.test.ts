/**
 * Swagger UI at /docs, as an integrator opens it: it renders the document's operations under the
 * server's Content-Security-Policy without a single violation (a securitypolicyviolation event or a CSP
 * report on the console) and without a page error.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type ConsolePage, launchBrowser, openConsole } from './support/browser';
import { type RunningServer, startServer } from './support/server';

describe('Swagger UI at /docs', () => {
  let server: RunningServer;
  let browser: Browser;
  let docs: ConsolePage;

  beforeAll(async () => {
    [server, browser] = await Promise.all([
      startServer({ templateDataDir: inject('templateDataDir') }),
      launchBrowser(),
    ]);
  });
  afterAll(async () => {
    await docs?.close();
    await browser?.close();
    await server?.stop();
  });

  it('loads the document and renders its operations with no CSP violation', async () => {
    docs = await openConsole(browser, server.baseUrl);
    const answer = await docs.page.goto('/docs', { timeout: 60_000 });
    expect(answer?.ok()).toBe(true);
    await docs.page.getByRole('heading', { name: /Lendlock API/ }).waitFor({ timeout: 45_000 });
    // An operation rendered from the document (its summary), expanded to its request body.
    const login = docs.page.locator('#operations-Sign-in-login');
    await expect.poll(() => login.textContent()).toContain('Sign in with email and password');
    await login.locator('.opblock-summary').click();
    await login.getByRole('heading', { name: /Request body/ }).waitFor();
    // Let late images, fonts and styles load (or be blocked) before reading the violations.
    await docs.page.waitForLoadState('networkidle');
    expect(await docs.cspViolations()).toEqual([]);
    expect(docs.pageErrors).toEqual([]);
  });
});
