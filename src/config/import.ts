import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { errorMessage, TackError } from '../errors.js';
import { isRecord } from '../util/is-record.js';
import { readRegularFile } from '../util/read-regular.js';
import { type AddServersOutcome, addServersTo, type ConfigTarget, type ServerEntry } from './edit.js';
import { checkServerName } from './load.js';
import { parseTomlSubset, TomlSubsetError, type TomlValue } from './toml-subset.js';

/*
 * `tack init --import`: the MCP servers people already configured for other hosts, found where those hosts keep
 * them and converted to tack's entries. Claude Desktop, Claude Code and Cursor use the same `mcpServers` format as
 * tack; VS Code keeps `servers` with a `type` each and its own `${...}` variables; Codex keeps TOML tables.
 */

export const IMPORT_SOURCES = ['claude-desktop', 'claude-code', 'cursor', 'vscode', 'codex'] as const;
export type ImportSource = (typeof IMPORT_SOURCES)[number];

/** One server of another host's file. */
export interface ImportCandidate {
  name: string;
  /** The entry in tack's format; absent when it cannot be converted (`problem` says why). */
  entry?: ServerEntry;
  problem?: string;
  /** What the conversion changed or left out. */
  notes: string[];
}

/** One file of another host, and the servers in it. */
export interface FoundServers {
  source: ImportSource;
  /** "Claude Desktop", "Cursor (this project)". */
  label: string;
  file: string;
  servers: ImportCandidate[];
  /** The file exists and could not be read (invalid JSON or TOML, too large). */
  error?: string;
  /** A file tack itself reads (the project's .mcp.json): shown, never copied. */
  readByTack?: boolean;
}

export interface FindImportsOptions {
  /** The project folder (default `process.cwd()`): VS Code's and Claude Code's per-project servers. */
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Where Claude Desktop keeps its file differs per system (default `process.platform`). */
  platform?: NodeJS.Platform;
}

/** A config file past this is not read (~/.claude.json holds history too, but not this much). */
const MAX_FILE_BYTES = 64 * 1024 * 1024;

/** The files of every supported host that exist, each with its servers; files that are absent are left out. */
export function findImportableServers(options: FindImportsOptions = {}): FoundServers[] {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd ?? process.cwd());
  const home = env.HOME || homedir();
  const platform = options.platform ?? process.platform;
  const vars = { home };
  const out: FoundServers[] = [];
  const add = (found: FoundServers | undefined) => {
    if (found) out.push(found);
  };

  const desktopDir =
    platform === 'darwin'
      ? join(home, 'Library', 'Application Support', 'Claude')
      : platform === 'win32'
        ? join(env.APPDATA || join(home, 'AppData', 'Roaming'), 'Claude')
        : join(env.XDG_CONFIG_HOME || join(home, '.config'), 'Claude');
  add(
    readJsonSource(
      'claude-desktop',
      'Claude Desktop',
      join(desktopDir, 'claude_desktop_config.json'),
      (root) => jsonServers(root.mcpServers, vars),
    ),
  );

  const claudeJson = join(home, '.claude.json');
  add(
    readJsonSource('claude-code', 'Claude Code (user)', claudeJson, (root) =>
      jsonServers(root.mcpServers, vars),
    ),
  );
  add(
    readJsonSource('claude-code', 'Claude Code (this project)', claudeJson, (root) => {
      const projects = isRecord(root.projects) ? root.projects : {};
      const key = [cwd, realOr(cwd)].find((path) => isRecord(projects[path]));
      return key === undefined
        ? []
        : jsonServers((projects[key] as Record<string, unknown>).mcpServers, vars);
    }),
  );
  const mcpJson = readJsonSource('claude-code', 'Claude Code (.mcp.json)', join(cwd, '.mcp.json'), (root) =>
    jsonServers(root.mcpServers, vars),
  );
  if (mcpJson) add({ ...mcpJson, readByTack: true });

  add(
    readJsonSource('cursor', 'Cursor (user)', join(home, '.cursor', 'mcp.json'), (r) =>
      jsonServers(r.mcpServers, vars),
    ),
  );
  add(
    readJsonSource('cursor', 'Cursor (this project)', join(cwd, '.cursor', 'mcp.json'), (r) =>
      jsonServers(r.mcpServers, vars),
    ),
  );
  add(
    readJsonSource('vscode', 'VS Code (this project)', join(cwd, '.vscode', 'mcp.json'), (r) =>
      jsonServers(r.servers, vars),
    ),
  );

  const codexHome = env.CODEX_HOME ? resolve(env.CODEX_HOME) : join(home, '.codex');
  add(readCodex(join(codexHome, 'config.toml')));
  for (const found of out)
    found.servers = found.servers.map((server) => {
      const problem = server.problem ? undefined : checkServerName(server.name);
      return problem ? { name: server.name, problem, notes: server.notes } : server;
    });
  // A source whose file exists but lists no server says nothing worth showing.
  return out.filter((found) => found.error !== undefined || found.servers.length > 0);
}

/** The sources `--import` names: a comma-separated list of IMPORT_SOURCES, or `all`. */
export function parseImportSources(list: string): ImportSource[] {
  const names = list
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.includes('all')) return [...IMPORT_SOURCES];
  const unknown = names.filter((name) => !(IMPORT_SOURCES as readonly string[]).includes(name));
  if (unknown.length > 0 || names.length === 0)
    throw new TackError(
      'USAGE',
      `--import: expected a comma-separated list of ${IMPORT_SOURCES.join(', ')} or all, got ${JSON.stringify(list)}`,
      { hint: 'e.g. tack init --import claude-desktop,cursor' },
    );
  return names as ImportSource[];
}

export interface ImportOutcome extends AddServersOutcome {
  /** Names met again in a later file: the first one found was taken. */
  duplicates: Array<{ name: string; file: string; kept: string }>;
}

/**
 * Writes the convertible servers of `found` into `target` in one write (files tack reads itself are skipped). A
 * name already in the target is refused unless `force`; a name found twice is taken from the first file.
 */
export function importServers(
  found: readonly FoundServers[],
  target: ConfigTarget,
  options: { force?: boolean; env?: Readonly<Record<string, string | undefined>> } = {},
): ImportOutcome {
  const taken = new Map<string, string>();
  const entries: Array<{ name: string; entry: ServerEntry }> = [];
  const duplicates: ImportOutcome['duplicates'] = [];
  for (const source of found) {
    if (source.readByTack) continue;
    for (const server of source.servers) {
      if (!server.entry) continue;
      const kept = taken.get(server.name);
      if (kept !== undefined) {
        duplicates.push({ name: server.name, file: source.file, kept });
        continue;
      }
      taken.set(server.name, source.file);
      entries.push({ name: server.name, entry: server.entry });
    }
  }
  const outcome =
    entries.length > 0
      ? addServersTo(target, entries, { ...options, refuseSecrets: true })
      : { added: [], replaced: [], refused: [], warnings: [] };
  return { ...outcome, duplicates };
}

function readJsonSource(
  source: ImportSource,
  label: string,
  file: string,
  servers: (root: Record<string, unknown>) => ImportCandidate[],
): FoundServers | undefined {
  const text = readSource(file);
  if (text === undefined) return undefined;
  if (typeof text !== 'string') return { source, label, file, servers: [], error: text.error };
  let root: unknown;
  try {
    root = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch (error) {
    return { source, label, file, servers: [], error: `not valid JSON (${errorMessage(error)})` };
  }
  if (!isRecord(root))
    return { source, label, file, servers: [], error: 'expected a JSON object at the top level' };
  return { source, label, file, servers: servers(root) };
}

function readSource(file: string): string | { error: string } | undefined {
  try {
    return readRegularFile(file, MAX_FILE_BYTES);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    if (code === 'EFBIG') return { error: `larger than ${MAX_FILE_BYTES / 1024 / 1024} MiB` };
    if (code === 'ENOTREG') return { error: 'not a regular file (a device, FIFO or folder)' };
    return { error: `cannot read (${errorMessage(error)})` };
  }
}

const TACK_KEYS = new Set(['type', 'command', 'args', 'env', 'cwd', 'url', 'headers']);

/** An `mcpServers` (Claude, Cursor) or `servers` (VS Code) object, entry by entry. */
function jsonServers(block: unknown, vars: { home: string }): ImportCandidate[] {
  if (!isRecord(block)) return [];
  return Object.entries(block).map(([name, raw]) => {
    if (!isRecord(raw)) return { name, problem: 'not an object', notes: [] };
    const notes: string[] = [];
    const entry: ServerEntry = {};
    for (const [key, value] of Object.entries(raw)) {
      if (TACK_KEYS.has(key)) entry[key] = value;
      else if (key === 'disabled' && value === true) entry.enabled = false;
      else if (key !== 'disabled') notes.push(`left out "${key}"`);
    }
    // VS Code and some Claude Code entries spell the transport their own way; Claude Code writes "stdio".
    if (entry.type === 'streamable-http' || entry.type === 'streamableHttp') entry.type = 'http';
    if (entry.type === 'stdio') delete entry.type;
    return convertVariables(name, entry, notes, vars);
  });
}

/**
 * Rewrites the variables other hosts expand into tack's `${VAR}`: `${env:VAR}` (VS Code, Cursor), the workspace
 * folder (`.`: a relative path is taken from the config file's folder, the project's), the home folder. An entry
 * left with a variable tack cannot expand (`${input:...}`, a VS Code prompt) is not imported.
 */
function convertVariables(
  name: string,
  entry: ServerEntry,
  notes: string[],
  vars: { home: string },
): ImportCandidate {
  let problem: string | undefined;
  const convert = (text: string): string => {
    const out = text
      .replace(/\$\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, '${$1}')
      .replace(/\$\{workspaceFolder\}/g, '.')
      .replace(/\$\{userHome\}/g, vars.home);
    const foreign = /\$\{(?![A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\})[^}]*\}/.exec(out)?.[0];
    if (foreign && !problem)
      problem = foreign.startsWith('${input:')
        ? `uses ${foreign}, a value VS Code asks for: put it in an environment variable and write \${VAR}`
        : `uses ${foreign}, which tack does not expand`;
    return out;
  };
  // A hostile file's nesting must not exhaust the stack: no real entry is more than a few levels deep.
  const walk = (value: unknown, depth: number): unknown => {
    if (depth > 32) {
      problem ??= 'nested deeper than 32 levels';
      return undefined;
    }
    if (typeof value === 'string') return convert(value);
    if (Array.isArray(value)) return value.map((item) => walk(item, depth + 1));
    if (isRecord(value))
      return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, depth + 1)]));
    return value;
  };
  const converted = walk(entry, 0) as ServerEntry;
  return problem ? { name, problem, notes } : { name, entry: converted, notes };
}

/** Codex's `[mcp_servers.NAME]` tables. */
function readCodex(file: string): FoundServers | undefined {
  const base = { source: 'codex' as const, label: 'Codex', file };
  const text = readSource(file);
  if (text === undefined) return undefined;
  if (typeof text !== 'string') return { ...base, servers: [], error: text.error };
  let root: Record<string, TomlValue>;
  try {
    root = parseTomlSubset(text);
  } catch (error) {
    if (error instanceof TomlSubsetError) return { ...base, servers: [], error: error.message };
    throw error;
  }
  const block = root.mcp_servers;
  if (!isRecord(block)) return { ...base, servers: [] };
  return { ...base, servers: Object.entries(block).map(([name, raw]) => codexServer(name, raw)) };
}

/**
 * One Codex server: command/args/env/cwd as they are; `url` is an HTTP server, `bearer_token_env_var` and
 * `env_http_headers` become `${VAR}` headers, `env_vars` (names passed through) `${NAME}` env entries, the
 * timeouts in seconds tack's milliseconds.
 */
function codexServer(name: string, raw: unknown): ImportCandidate {
  if (!isRecord(raw)) return { name, problem: 'not a table', notes: [] };
  const notes: string[] = [];
  const entry: ServerEntry = {};
  const strings = (value: unknown) => (isRecord(value) ? stringValues(value) : {});
  for (const [key, value] of Object.entries(raw)) {
    switch (key) {
      case 'command':
      case 'cwd':
      case 'url':
        entry[key] = value;
        break;
      case 'args':
      case 'enabled_tools':
      case 'disabled_tools':
        entry[key === 'args' ? 'args' : key === 'enabled_tools' ? 'enabledTools' : 'disabledTools'] = value;
        break;
      case 'env':
        entry.env = { ...(entry.env as object | undefined), ...strings(value) };
        break;
      case 'env_vars':
        if (Array.isArray(value))
          entry.env = {
            ...Object.fromEntries(
              value.filter((v): v is string => typeof v === 'string').map((v) => [v, `\${${v}}`]),
            ),
            ...(entry.env as object | undefined),
          };
        break;
      case 'http_headers':
        entry.headers = { ...(entry.headers as object | undefined), ...strings(value) };
        break;
      case 'env_http_headers':
        entry.headers = {
          ...(entry.headers as object | undefined),
          ...Object.fromEntries(Object.entries(strings(value)).map(([h, v]) => [h, `\${${v}}`])),
        };
        break;
      case 'bearer_token_env_var':
        if (typeof value === 'string')
          entry.headers = { ...(entry.headers as object | undefined), Authorization: `Bearer \${${value}}` };
        break;
      case 'startup_timeout_sec':
      case 'tool_timeout_sec':
        if (typeof value === 'number')
          entry[key === 'startup_timeout_sec' ? 'startupTimeoutMs' : 'callTimeoutMs'] = Math.round(
            value * 1000,
          );
        break;
      case 'startup_timeout_ms':
        entry.startupTimeoutMs = value;
        break;
      case 'enabled':
        entry.enabled = value;
        break;
      default:
        notes.push(`left out "${key}"`);
    }
  }
  if (entry.url !== undefined && entry.command === undefined) entry.type = 'http';
  return { name, entry, notes };
}

function stringValues(value: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(value).filter((pair): pair is [string, string] => typeof pair[1] === 'string'),
  );
}

function realOr(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
