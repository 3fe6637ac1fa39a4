import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig, type TackConfig } from '../../src/config/load.js';
import { type HostOptions, McpHost } from '../../src/mcp/host.js';
import { TackStore } from '../../src/store/store.js';

export const REPO = resolve(fileURLToPath(new URL('../..', import.meta.url)));
/** Fixture servers are compiled by `npm run build` (test/global-setup.ts checks they are there). */
export const FIXTURES = join(REPO, 'dist', 'test', 'fixtures', 'servers');

/** server-everything, the third-party 2025-era server from npm (a devDependency); run it with this Node. */
export const EVERYTHING = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

export function fixture(script: string): string {
  return join(FIXTURES, script);
}

/** A stdio entry running one of our fixture servers with this very Node. */
export function fixtureEntry(script: string, args: string[] = [], extra: Record<string, unknown> = {}) {
  return { command: process.execPath, args: [fixture(script), ...args], ...extra };
}

/** A disposable project directory with its own TACK_HOME, removed at the end of the test. */
export interface TempProject {
  dir: string;
  home: string;
  env: Record<string, string | undefined>;
  write(file: string, content: unknown): string;
  /** The configuration tack loads in this project (its files, its TACK_HOME). */
  load(): TackConfig;
  /** Writes `mcpServers` to tack.json and loads the configuration. */
  config(mcpServers: Record<string, unknown>): TackConfig;
  [Symbol.dispose](): void;
}

export function tempProject(prefix = 'tack-test-'): TempProject {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, '.tack-home');
  // Trusted: most tests write a project tack.json and expect its servers to run. Project trust's own tests
  // (test/security/project-trust.test.ts) take this out.
  const env: Record<string, string | undefined> = {
    ...process.env,
    TACK_HOME: home,
    TACK_TRUST_PROJECT: '1',
  };
  const write = (file: string, content: unknown) => {
    const path = join(dir, file);
    writeFileSync(path, typeof content === 'string' ? content : JSON.stringify(content, null, 2));
    return path;
  };
  const load = () => loadConfig({ cwd: dir, env });
  return {
    dir,
    home,
    env,
    write,
    load,
    config(mcpServers) {
      write('tack.json', { mcpServers });
      return load();
    },
    [Symbol.dispose]() {
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Restart quickly in tests; the production policy waits 0.5 s and more. */
export const FAST_RESTARTS = { initialDelayMs: 20, maxDelayMs: 100 };

export async function startHost(
  project: TempProject,
  mcpServers: Record<string, unknown>,
  options: Partial<HostOptions> = {},
): Promise<McpHost> {
  const config = project.config(mcpServers);
  // The store is opened by whoever composes a host (as the CLI does), and closed after it.
  const store = options.store ?? TackStore.open(config.paths.storeFile);
  const host = await McpHost.start({ config, restartPolicy: FAST_RESTARTS, store, ...options });
  if (options.store === undefined) {
    const close = host.close.bind(host);
    host.close = async () => {
      await close();
      store.close();
    };
  }
  return host;
}

/**
 * A working folder and a home folder of its own inside `p`, for commands that read other hosts' files from the
 * home (tack init's import): none are there unless a test `put`s them.
 */
export function ownHome(p: TempProject) {
  const dir = join(p.dir, 'work');
  const home = join(p.dir, 'home');
  mkdirSync(dir);
  mkdirSync(home);
  const env = { ...p.env, HOME: home, XDG_CONFIG_HOME: undefined, CODEX_HOME: undefined, APPDATA: undefined };
  const put = (file: string, text: string) => {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  };
  return { dir, home, env, put };
}
