import { chromium, type Browser } from 'playwright-core';
import { requireBinary } from './binaries.ts';

/** Debian's Chromium, which `.ci/run` installs; playwright-core drives it and downloads nothing. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Whether the browser tests can run here. In CI a missing browser is a failure, never a skip;
 * elsewhere the tests are skipped with a notice that says how to get them.
 */
export const browserAvailable = (): boolean => requireBinary(CHROMIUM_PATH);

export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    // This machine has no network beyond loopback: keep Chromium from calling out in the background.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}
