import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestScope } from './scope.js';

/** The sandbox needs bubblewrap, which is Linux's; elsewhere these tests have nothing to run on. */
export const LINUX = process.platform === 'linux';

/**
 * bubblewrap keeps tack's uid: under root the sandboxed process is uid 0 without capabilities and can read the
 * system's root-only files, so no sandbox then guarantees "no private files" (CI runs as root).
 */
export const RUNS_AS_ROOT = process.geteuid?.() === 0;

export const FAKE_KEY =
  '-----BEGIN OPENSSH PRIVATE KEY-----\nfake key of the sandbox tests\n-----END OPENSSH PRIVATE KEY-----\n';

/** A home folder of the test's own, outside the workspace, holding a fake `~/.ssh/id_rsa`. */
export function fakeHome(scope: TestScope): { home: string; key: string } {
  const home = mkdtempSync(join(tmpdir(), 'tack-home-'));
  scope.defer(() => rmSync(home, { recursive: true, force: true }));
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  const key = join(home, '.ssh', 'id_rsa');
  writeFileSync(key, FAKE_KEY, { mode: 0o600 });
  return { home, key };
}

export interface CountingServer {
  port: number;
  /** Requests it received, as `METHOD /path`. */
  requests: string[];
}

/** An HTTP server on 127.0.0.1 answering `200 <name>` and counting what reaches it. */
export async function countingServer(scope: TestScope, name: string): Promise<CountingServer> {
  const requests: string[] = [];
  const server: Server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  scope.defer(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { port: (server.address() as { port: number }).port, requests };
}

/** The pids of processes whose command line holds `marker` (a unique argument given to a fixture). */
export function pidsWith(marker: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (
        readFileSync(join('/proc', entry, 'cmdline'), 'utf8')
          .split('\0')
          .includes(marker)
      )
        pids.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return pids;
}

/** Waits until `check` holds, up to `ms`. */
export async function eventually(check: () => boolean, ms = 10_000): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return true;
}

/**
 * A folder the host can write and a sandbox sees only through its read-only root: /var/tmp (on the root file
 * system, neither the private /tmp nor a home folder), whatever folder the checkout itself lies in.
 */
export function readOnlyRootDir(): string {
  return '/var/tmp';
}
