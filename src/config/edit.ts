import { existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { TackError } from '../errors.js';
import { pushAll } from '../util/arrays.js';
import { secretValuesOf } from '../util/secrets.js';
import { readJsonFile, writeJsonFile } from './json-file.js';
import { type ConfigSource, checkServerName, formatIssue, invalidConfig, parseConfigText } from './load.js';
import { findProjectRoot, resolvePaths } from './paths.js';
import { entrySchemaFor } from './schema.js';

/*
 * `tack mcp add | remove | list | get`: the server entries of the configuration files, edited the way
 * `claude mcp add` edits Claude Code's. A file is read whole, one entry changed, and written back whole with the
 * rest as it was (other servers, other keys, the file's indentation).
 */

/**
 * Which file an edit goes to: `project` the project's `.mcp.json` (Claude Code reads it too), `tack` the
 * project's `tack.json`, `user` the user file (`config.json` under the XDG config folder, or TACK_HOME).
 */
export type ServerScope = 'project' | 'tack' | 'user';
export const SERVER_SCOPES: readonly ServerScope[] = ['project', 'tack', 'user'];

export interface ConfigTarget {
  file: string;
  format: 'tack' | 'mcp.json';
  /** `explicit`: a file named with --config. */
  scope: ServerScope | 'explicit';
}

/** Where the files are looked for: the working folder (the project is found from it) and the environment. */
export interface EditLocation {
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** One file alone (--config): every edit goes to it, and only it is listed. */
  configFile?: string;
}

/** The files an edit can touch, lowest precedence first (the order tack reads them in). */
export function configTargets(where: EditLocation = {}): ConfigTarget[] {
  const cwd = resolve(where.cwd ?? process.cwd());
  if (where.configFile) {
    const file = resolve(cwd, where.configFile);
    return [{ file, format: basename(file) === '.mcp.json' ? 'mcp.json' : 'tack', scope: 'explicit' }];
  }
  const root = findProjectRoot(cwd);
  return [
    { file: resolvePaths(where.env ?? process.env).userConfigFile, format: 'tack', scope: 'user' },
    { file: join(root, '.mcp.json'), format: 'mcp.json', scope: 'project' },
    { file: join(root, 'tack.json'), format: 'tack', scope: 'tack' },
  ];
}

/**
 * The file `scope` names. Without one: the --config file if given; else the project's `.mcp.json` when it
 * exists (someone coming from Claude Code keeps one list of servers, read by both), else its `tack.json`.
 */
export function configTarget(scope: ServerScope | undefined, where: EditLocation = {}): ConfigTarget {
  const targets = configTargets(where);
  if (where.configFile) {
    if (scope)
      throw new TackError('USAGE', `--scope ${scope} and --config do not go together`, {
        hint: '--config names the one file to edit; leave out one of the two.',
      });
    return targets[0]!;
  }
  if (scope) return targets.find((target) => target.scope === scope)!;
  const mcpJson = targets.find((target) => target.scope === 'project')!;
  return existsSync(mcpJson.file) ? mcpJson : targets.find((target) => target.scope === 'tack')!;
}

/** A server entry as a configuration file holds it (`command`/`args`/`env`, or `type`/`url`/`headers`, ...). */
export type ServerEntry = Record<string, unknown>;

export interface EntryFromArgs {
  /** Default: `http` when the only argument is an http(s) URL, else `stdio`. */
  transport?: string;
  /** The command (stdio) or the URL (http, sse). */
  target: string;
  args?: readonly string[];
  /** `KEY=value`, each. */
  env?: readonly string[];
  /** `Name: value`, each. */
  headers?: readonly string[];
}

/** The entry `tack mcp add` writes, from its command line: what `claude mcp add` takes, in the same shape. */
export function entryFromArgs(input: EntryFromArgs): ServerEntry {
  const args = input.args ?? [];
  const url = /^https?:\/\//i.test(input.target) && args.length === 0;
  const transport = input.transport ?? (url ? 'http' : 'stdio');
  if (transport !== 'stdio' && transport !== 'http' && transport !== 'sse')
    throw new TackError(
      'USAGE',
      `--transport: expected stdio, http or sse, got ${JSON.stringify(transport)}`,
    );
  const env = pairs(input.env ?? [], '=', '-e/--env', 'KEY=value');
  const headers = pairs(input.headers ?? [], ':', '-H/--header', "'Name: value'");
  if (transport === 'stdio') {
    if (Object.keys(headers).length > 0)
      throw new TackError('USAGE', '-H/--header is for http and sse servers; a stdio server takes -e/--env', {
        hint: 'Give --transport http (or sse) with a URL, or pass the value with -e KEY=value.',
      });
    return {
      command: input.target,
      ...(args.length > 0 ? { args: [...args] } : {}),
      ...(Object.keys(env).length > 0 ? { env } : {}),
    };
  }
  if (args.length > 0)
    throw new TackError('USAGE', `a ${transport} server takes one URL, got ${args.length + 1} arguments`, {
      hint: `tack mcp add --transport ${transport} <name> <url>`,
    });
  if (Object.keys(env).length > 0)
    throw new TackError('USAGE', `-e/--env is for stdio servers; a ${transport} server takes -H/--header`, {
      hint: "Send a token as a header: -H 'Authorization: Bearer ${TOKEN}'.",
    });
  return { type: transport, url: input.target, ...(Object.keys(headers).length > 0 ? { headers } : {}) };
}

function pairs(
  items: readonly string[],
  separator: string,
  option: string,
  form: string,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of items) {
    const at = item.indexOf(separator);
    const key = at > 0 ? item.slice(0, at).trim() : '';
    if (key === '')
      throw new TackError('USAGE', `${option}: expected ${form}, got ${JSON.stringify(item)}`, {
        hint: `Give ${form}; repeat ${option} for more.`,
      });
    out[key] = item.slice(at + 1).trim();
  }
  return out;
}

export interface AddServerOptions extends EditLocation {
  scope?: ServerScope;
  name: string;
  entry: ServerEntry;
  /** Replace an entry of the same name in the file (else that is refused). */
  force?: boolean;
}

export interface AddServerResult {
  target: ConfigTarget;
  /** Whether an entry of the same name was replaced (--force). */
  replaced: boolean;
  /** Things worth telling: a secret written into a shared file, an unset variable, a name another file wins. */
  warnings: string[];
}

/** Adds (or with `force` replaces) one server entry, checked as tack checks it when it loads the file. */
export function addServer(options: AddServerOptions): AddServerResult {
  const target = configTarget(options.scope, options);
  const outcome = addServersTo(target, [{ name: options.name, entry: options.entry }], options);
  const problem = outcome.refused[0];
  if (problem) throw problem.error;
  const warnings = [...outcome.warnings];
  // A more local file's entry of the same name is the one tack uses: say so, or the edit seems to do nothing.
  const targets = configTargets(options);
  const after = targets.slice(targets.findIndex((t) => t.file === target.file) + 1);
  for (const later of after)
    if (hasEntry(later, options.name))
      warnings.push(
        `${later.file} also defines "${options.name}" and wins over ${target.file}; remove it there (tack mcp remove ${options.name} --scope ${later.scope}) or edit it`,
      );
  return { target, replaced: outcome.replaced.length > 0, warnings };
}

export interface AddServersOutcome {
  added: string[];
  replaced: string[];
  /** Entries not written, each with the reason (a name taken, an entry that does not validate). */
  refused: Array<{ name: string; error: TackError }>;
  warnings: string[];
}

/**
 * Adds several entries to one file in one write (tack init's import): each is checked alone; one refused leaves
 * the others. Nothing is written when none was added.
 */
export function addServersTo(
  target: ConfigTarget,
  entries: ReadonlyArray<{ name: string; entry: ServerEntry }>,
  options: {
    force?: boolean;
    env?: Readonly<Record<string, string | undefined>>;
    /**
     * Refuse (rather than warn about) an entry holding a credential as its value when `target` is a project
     * file: an import copies values nobody typed, out of a private file into one that is usually committed.
     */
    refuseSecrets?: boolean;
  } = {},
): AddServersOutcome {
  const json = readJsonFile(target.file, 'Fix the file (or move it away), then run the command again.');
  const servers = serversBlock(json.root, json.file);
  const outcome: AddServersOutcome = { added: [], replaced: [], refused: [], warnings: [] };
  for (const { name, entry } of entries) {
    const problem = checkServerName(name);
    if (problem) {
      outcome.refused.push({
        name,
        error: new TackError('USAGE', problem, {
          subject: { server: name },
          hint: 'Pick a name of letters, digits, "_" and "-", e.g. my-server.',
        }),
      });
      continue;
    }
    const exists = Object.hasOwn(servers, name);
    if (exists && !options.force) {
      outcome.refused.push({
        name,
        error: new TackError('USAGE', `${json.file}: a server named "${name}" exists already`, {
          subject: { file: json.file, path: `mcpServers.${name}`, server: name },
          hint: `Pick another name, add --force to replace it, or \`tack mcp remove ${name}\` first.`,
        }),
      });
      continue;
    }
    const checked = checkEntry(name, entry, target, options.env ?? process.env);
    if (checked instanceof TackError) {
      outcome.refused.push({ name, error: checked });
      continue;
    }
    const secrets = secretWarnings(name, entry, target);
    if (options.refuseSecrets && secrets.length > 0) {
      outcome.refused.push({
        name,
        error: new TackError(
          'USAGE',
          `"${name}" holds a credential as a value, and ${target.file} is a project file, usually committed: not copied there`,
          {
            subject: { file: target.file, server: name },
            details: secrets,
            hint: `Keep the credential in your environment and add the server with its value as \${VAR}: tack mcp add ${name} ... (or tack mcp add -s user to keep it in your own config).`,
          },
        ),
      });
      continue;
    }
    pushAll(outcome.warnings, checked);
    pushAll(outcome.warnings, secrets);
    servers[name] = entry;
    (exists ? outcome.replaced : outcome.added).push(name);
  }
  if (outcome.added.length + outcome.replaced.length === 0) return outcome;
  json.root.mcpServers = servers;
  writeJsonFile(json, target.scope === 'user' || target.scope === 'explicit' ? 0o600 : 0o644);
  return outcome;
}

/**
 * The entry checked by the loader itself (parseConfigText), as its own file: an error for what tack would refuse
 * to load, warnings for the rest. A variable that is not set here is a warning: it may be set where tack runs.
 */
function checkEntry(
  name: string,
  entry: ServerEntry,
  target: ConfigTarget,
  env: Readonly<Record<string, string | undefined>>,
): TackError | string[] {
  const source: ConfigSource = {
    file: target.file,
    scope: target.scope === 'user' ? 'user' : target.scope === 'explicit' ? 'explicit' : 'project',
    format: target.format,
  };
  const parsed = parseConfigText(JSON.stringify({ mcpServers: { [name]: entry } }), source, env);
  const unset = parsed.issues.filter((issue) => /, which is not set/.test(issue.message));
  const errors = parsed.issues.filter((issue) => !unset.includes(issue));
  if (errors.length > 0) return invalidConfig(errors);
  return [...unset, ...parsed.warnings].map((issue) =>
    /, which is not set/.test(issue.message)
      ? `${formatIssue(issue).replace(/;.*$/, '')} here: tack does not load ${target.file} where it is unset (set it, or write \${VAR:-default})`
      : formatIssue(issue),
  );
}

/** A credential written as its value into a project file goes wherever the repository goes: say how not to. */
function secretWarnings(name: string, entry: ServerEntry, target: ConfigTarget): string[] {
  if (target.scope === 'user') return [];
  const env = stringRecord(entry.env);
  const headers = stringRecord(entry.headers);
  const secrets = new Set(secretValuesOf({ env, headers }));
  const out: string[] = [];
  const shared = `${target.file} is a project file, usually committed`;
  for (const [key, value] of Object.entries(env))
    if (!value.includes('${') && secrets.has(value))
      out.push(
        `"${name}": env ${key} holds a credential and ${shared}: write its value as \${${key}} (-e ${key}='\${${key}}') and keep the credential in your environment (tack expands \${VAR} when it starts the server)`,
      );
  for (const [key, value] of Object.entries(headers))
    if (!value.includes('${') && (secrets.has(value) || secrets.has(value.replace(/^\S+\s+/, ''))))
      out.push(
        `"${name}": header ${key} holds a credential and ${shared}: write it as -H '${key}: ${/^\S+\s+\S/.test(value) ? `${value.split(/\s+/)[0]} ` : ''}\${TOKEN_VAR}' instead and keep the value in your environment (tack expands \${VAR} in headers)`,
      );
  return out;
}

export interface RemoveServerOptions extends EditLocation {
  /** Without one: the one file that defines the name (refused when several do). */
  scope?: ServerScope;
  name: string;
}

export interface RemoveServerResult {
  target: ConfigTarget;
  /** The entry as the file had it. */
  entry: unknown;
}

/** Removes one server entry; the rest of the file is kept as it was. */
export function removeServer(options: RemoveServerOptions): RemoveServerResult {
  const { name } = options;
  let target: ConfigTarget;
  if (options.scope || options.configFile) target = configTarget(options.scope, options);
  else {
    const holding = configTargets(options).filter((t) => hasEntry(t, name));
    if (holding.length === 0) throw notFound(name, configTargets(options));
    if (holding.length > 1)
      throw new TackError(
        'USAGE',
        `"${name}" is defined in ${holding.length} files: ${holding.map((t) => t.file).join(', ')}`,
        {
          subject: { server: name },
          hint: `Say which: --scope ${holding.map((t) => t.scope).join(' or --scope ')}.`,
        },
      );
    target = holding[0]!;
  }
  const json = readJsonFile(target.file, 'Fix the file, then run the command again.');
  const servers = json.exists ? serversBlock(json.root, json.file) : {};
  if (!Object.hasOwn(servers, name)) throw notFound(name, [target]);
  const entry = servers[name];
  delete servers[name];
  json.root.mcpServers = servers;
  writeJsonFile(json);
  return { target, entry };
}

function notFound(name: string, searched: readonly ConfigTarget[]): TackError {
  return new TackError(
    'UNKNOWN_SERVER',
    `no server named "${name}" in ${searched.map((t) => t.file).join(', ')}`,
    {
      subject: { server: name },
      hint: '`tack mcp list` shows every server and the file it is in.',
    },
  );
}

/** One entry of one file, as `tack mcp list` shows it. */
export interface ListedServerEntry {
  name: string;
  scope: ConfigTarget['scope'];
  file: string;
  /** `?` when the entry has neither a command nor a url (tack refuses to load it). */
  transport: 'stdio' | 'http' | 'sse' | '?';
  /** The command line (as written: `${VAR}` unexpanded) or the URL. */
  command?: string;
  args?: string[];
  url?: string;
  enabled: boolean;
  /** The more local file whose entry of the same name tack uses instead. */
  shadowedBy?: string;
  /** The entry as written. */
  entry: unknown;
}

/**
 * Every server entry of every file tack reads, as written (variables unexpanded: a listing shows no secret), in
 * the order tack reads them, each with its file and whether a more local file's entry of its name wins.
 */
export function listServerEntries(where: EditLocation = {}): ListedServerEntry[] {
  const rows: ListedServerEntry[] = [];
  for (const target of configTargets(where)) {
    for (const [name, entry] of Object.entries(entriesOf(target) ?? {})) {
      const record = typeof entry === 'object' && entry !== null && !Array.isArray(entry) ? entry : {};
      const fields = record as Record<string, unknown>;
      const transport = entrySchemaFor(fields)?.transport ?? '?';
      const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
      const command = text(fields.command);
      const url = text(fields.url);
      const args = Array.isArray(fields.args)
        ? fields.args.filter((a): a is string => typeof a === 'string')
        : [];
      for (const earlier of rows)
        if (earlier.name === name && !earlier.shadowedBy) earlier.shadowedBy = target.file;
      rows.push({
        name,
        scope: target.scope,
        file: target.file,
        transport,
        ...(transport === 'stdio' && command !== undefined ? { command, args } : {}),
        ...(transport !== 'stdio' && url !== undefined ? { url } : {}),
        enabled: fields.enabled !== false,
        entry,
      });
    }
  }
  return rows;
}

/** The `mcpServers` of a file, or undefined when the file is absent or unreadable (the loader reports those). */
function entriesOf(target: ConfigTarget): Record<string, unknown> | undefined {
  try {
    const json = readJsonFile(target.file, '');
    const block = json.root.mcpServers;
    return typeof block === 'object' && block !== null && !Array.isArray(block)
      ? (block as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Own entries only: a server named `constructor` or `toString` is not found on every file's prototype. */
function hasEntry(target: ConfigTarget, name: string): boolean {
  const entries = entriesOf(target);
  return entries !== undefined && Object.hasOwn(entries, name) && entries[name] !== undefined;
}

function serversBlock(root: Record<string, unknown>, file: string): Record<string, unknown> {
  const block = root.mcpServers ?? {};
  if (typeof block !== 'object' || block === null || Array.isArray(block))
    throw new TackError('CONFIG_INVALID', `${file}: mcpServers: expected an object of servers by name`, {
      subject: { file, path: 'mcpServers' },
      hint: 'Fix the file, then run the command again.',
    });
  return block as Record<string, unknown>;
}

function stringRecord(value: unknown): Record<string, string> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
  return Object.fromEntries(
    Object.entries(value).filter((pair): pair is [string, string] => typeof pair[1] === 'string'),
  );
}
