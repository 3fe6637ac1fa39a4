import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

/** Where tack keeps its user configuration and its state (the SQLite store, server logs, later transcripts). */
export interface TackPaths {
  configDir: string;
  /** `~/.config/tack/config.json` (same format as tack.json). */
  userConfigFile: string;
  stateDir: string;
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
