/**
 * Polls `check` every `intervalMs` until it returns a truthy value, and resolves with that value; throws
 * "timed out waiting for <what>" after `timeoutMs`. For a check written as assertions inside a vitest
 * test, use `vi.waitFor` or `expect.poll` instead; this one also serves code outside vitest (bench/).
 */
export async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  timeoutMs = 20_000,
  intervalMs = 50,
): Promise<Exclude<T, false | null | undefined | 0 | ''>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as Exclude<T, false | null | undefined | 0 | ''>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
