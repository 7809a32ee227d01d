/**
 * Debian's Chromium (CHROMIUM_PATH, /usr/bin/chromium by default; never a downloaded browser), headless,
 * with the flags this closed network needs (no background networking, component updates or sync). The
 * one launcher of the browser tests and the benchmarks (bench/lib/chromium.ts).
 */
import { type Browser, chromium } from 'playwright-core';

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
