import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from 'playwright-core';

/** Debian's Chromium (`apt-get install chromium`; .ci/run installs it): browsers cannot be downloaded here. */
export const CHROMIUM = process.env.TACK_CHROMIUM ?? '/usr/bin/chromium';

/**
 * A headless Chromium with a fresh profile folder (`--user-data-dir`, which Playwright takes as the persistent
 * context's folder), removed when closed. Without the background-networking flags Chromium reaches for Google's
 * services at start, which this machine's closed network (and CI's) refuses.
 */
export async function launchChromium(
  viewport = { width: 1280, height: 800 },
): Promise<BrowserContext & AsyncDisposable> {
  const profile = mkdtempSync(join(tmpdir(), 'tack-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return Object.assign(context, {
    [Symbol.asyncDispose]: async () => {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  });
}
