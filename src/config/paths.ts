import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/** Where tack keeps its user configuration and its state (the SQLite store, server logs, later transcripts). */
export interface TackPaths {
  configDir: string;
  /** `~/.config/tack/config.json` (same format as tack.json). */
  userConfigFile: string;
  stateDir: string;
  /**
   * Where server logs go: `<state>/logs` from resolvePaths; in a loaded configuration, the project's own folder
   * in it (`<state>/logs/<project key>`, see projectLogDir), so two projects' servers of one name do not share a file.
   */
  logDir: string;
  storeFile: string;
}

/**
 * XDG base directories, with `TACK_HOME` overriding both: `$TACK_HOME/config.json` and `$TACK_HOME/state/`.
 * One variable is enough to give a test, a CI job or a sandboxed agent its own isolated tack.
 */
export function resolvePaths(env: Readonly<Record<string, string | undefined>> = process.env): TackPaths {
  const tackHome = env.TACK_HOME;
  const home = env.HOME || homedir();
  const configDir = tackHome
    ? resolve(tackHome)
    : join(env.XDG_CONFIG_HOME ? resolve(env.XDG_CONFIG_HOME) : join(home, '.config'), 'tack');
  const stateDir = tackHome
    ? join(resolve(tackHome), 'state')
    : join(env.XDG_STATE_HOME ? resolve(env.XDG_STATE_HOME) : join(home, '.local', 'state'), 'tack');
  return {
    configDir,
    userConfigFile: join(configDir, 'config.json'),
    stateDir,
    logDir: join(stateDir, 'logs'),
    storeFile: join(stateDir, 'tack.db'),
  };
}

const PROJECT_MARKERS = ['tack.json', '.mcp.json', '.git'];

/** The nearest directory at or above `cwd` holding tack.json, .mcp.json or .git; `cwd` itself when none does. */
export function findProjectRoot(cwd: string): string {
  let dir = resolve(cwd);
  for (;;) {
    if (PROJECT_MARKERS.some((marker) => existsSync(join(dir, marker)))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return resolve(cwd);
    dir = parent;
  }
}

/**
 * A project's folder name a person can read, made unique by a hash of its absolute path: `shop-3f2a9c1e` for
 * /home/me/src/shop. Two folders of one name (two clones) get two keys; the `project` file in each log folder
 * names the path (ServerLog writes it).
 */
export function projectKey(projectRoot: string): string {
  const root = resolve(projectRoot);
  const name =
    basename(root)
      .replace(/[^A-Za-z0-9._-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 40) || 'root';
  return `${name}-${createHash('sha256').update(root).digest('hex').slice(0, 8)}`;
}

/** `<state>/logs/<project key>`: the server logs of one project. */
export function projectLogDir(logRoot: string, projectRoot: string): string {
  return join(logRoot, projectKey(projectRoot));
}
