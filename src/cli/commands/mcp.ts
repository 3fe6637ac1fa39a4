import {
  addServer,
  entryFromArgs,
  type ListedServerEntry,
  listServerEntries,
  removeServer,
  SERVER_SCOPES,
  type ServerScope,
} from '../../config/edit.js';
import type { TackConfig } from '../../config/load.js';
import { TackError } from '../../errors.js';
import { maskSecrets } from '../../util/secrets.js';
import { print, printJson, printListing, table, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface McpAddOptions extends GlobalOptions {
  transport?: string;
  scope?: string;
  env?: string[];
  header?: string[];
  force?: boolean;
}

/** `tack mcp add [-t stdio|http|sse] [-s scope] [-e K=v]... [-H 'N: v']... <name> <command-or-url> [args...]`. */
export async function mcpAddCommand(
  name: string,
  target: string,
  args: string[],
  options: McpAddOptions,
): Promise<number> {
  const entry = entryFromArgs({
    ...(options.transport ? { transport: options.transport } : {}),
    target,
    args,
    env: options.env ?? [],
    headers: options.header ?? [],
  });
  const result = addServer({
    name,
    entry,
    force: options.force === true,
    ...scopeOf(options),
    ...(options.config ? { configFile: options.config } : {}),
  });
  for (const message of result.warnings) warn(message);
  if (options.json) {
    printJson({
      name,
      file: result.target.file,
      scope: result.target.scope,
      replaced: result.replaced,
      entry,
    });
    return 0;
  }
  print(`${result.replaced ? 'Replaced' : 'Added'} "${name}" in ${result.target.file}.`);
  // A project file's servers wait for `tack trust`: loading the configuration warns (once) when this one does.
  if (result.target.scope === 'project' || result.target.scope === 'tack') await loadCliConfig(options);
  return 0;
}

/** `tack mcp remove <name> [-s scope]`: says which file it was removed from. */
export async function mcpRemoveCommand(
  name: string,
  options: GlobalOptions & { scope?: string },
): Promise<number> {
  const result = removeServer({
    name,
    ...scopeOf(options),
    ...(options.config ? { configFile: options.config } : {}),
  });
  if (options.json) printJson({ name, file: result.target.file, scope: result.target.scope, removed: true });
  else print(`Removed "${name}" from ${result.target.file}.`);
  return 0;
}

interface ListedRow extends Omit<ListedServerEntry, 'entry'> {
  /** `ok`, `disabled`, `shadowed`, or `untrusted` (a project file's server waiting for `tack trust`). */
  state: 'ok' | 'disabled' | 'shadowed' | 'untrusted';
}

/** `tack mcp list`: every entry of every file tack reads, with its file and whether it would start. */
export async function mcpListCommand(options: GlobalOptions): Promise<number> {
  const rows = listed(options, await trustedConfig(options));
  return printListing(
    options,
    rows,
    'No servers configured. Add one with `tack mcp add <name> -- <command> [args...]`.',
    () =>
      table(
        ['NAME', 'TRANSPORT', 'COMMAND / URL', 'FILE', 'STATE'],
        rows.map((row) => [
          row.name,
          row.transport,
          row.url ?? [row.command ?? '', ...(row.args ?? [])].join(' '),
          row.file,
          row.state === 'shadowed'
            ? `shadowed by ${row.shadowedBy}`
            : row.state === 'untrusted'
              ? 'waits for `tack trust`'
              : row.state,
        ]),
      ),
  );
}

/** `tack mcp get <name>`: the entry tack uses, as written and as resolved, with the file it comes from. */
export async function mcpGetCommand(name: string, options: GlobalOptions): Promise<number> {
  const config = await trustedConfig(options);
  const rows = listed(options, config).filter((row) => row.name === name);
  const winner = rows.find((row) => row.state !== 'shadowed');
  if (!winner)
    throw new TackError('UNKNOWN_SERVER', `no server named "${name}" in the configuration`, {
      subject: { server: name },
      hint: '`tack mcp list` shows every server and the file it is in.',
    });
  const written = listServerEntries(where(options)).find(
    (e) => e.file === winner.file && e.name === name,
  )?.entry;
  const server = config?.servers.find((s) => s.name === name);
  const resolved = server
    ? {
        transport: server.transport,
        enabled: server.enabled,
        ...(server.disabledReason ? { disabledReason: server.disabledReason } : {}),
        ...(server.transport === 'stdio'
          ? {
              // Expanded from the environment: key-shaped values are masked, env values left out (names only).
              command: maskSecrets(server.command) as string,
              args: maskSecrets(server.args) as string[],
              cwd: server.cwd,
              env: Object.keys(server.env),
            }
          : { url: maskSecrets(server.url) as string, headers: Object.keys(server.headers) }),
        startupTimeoutMs: server.startupTimeoutMs,
        callTimeoutMs: server.callTimeoutMs,
      }
    : undefined;
  const shadowed = rows.filter((row) => row !== winner).map((row) => row.file);
  if (options.json) {
    printJson({
      name,
      file: winner.file,
      scope: winner.scope,
      state: winner.state,
      entry: maskSecrets(written),
      resolved,
      shadowed,
    });
    return 0;
  }
  print(`${name}`);
  const lines: string[][] = [
    ['file', `${winner.file} (${winner.scope})`],
    ['state', winner.state === 'untrusted' ? `waits for \`tack trust\`` : winner.state],
  ];
  if (resolved) {
    lines.push(['transport', resolved.transport]);
    if ('command' in resolved) {
      lines.push(['command', [resolved.command, ...resolved.args].join(' ')], ['cwd', resolved.cwd]);
      if (resolved.env.length > 0) lines.push(['env', resolved.env.join(', ')]);
    } else {
      lines.push(['url', resolved.url]);
      if (resolved.headers.length > 0) lines.push(['headers', resolved.headers.join(', ')]);
    }
    lines.push(['timeouts', `start ${resolved.startupTimeoutMs} ms, call ${resolved.callTimeoutMs} ms`]);
    if (resolved.disabledReason) lines.push(['not started', resolved.disabledReason]);
  }
  for (const file of shadowed) lines.push(['also in', `${file} (shadowed)`]);
  for (const line of table(['', ''], lines).split('\n').slice(1)) print(`  ${line}`);
  print('As written:');
  print(JSON.stringify(maskSecrets(written), null, 2));
  return 0;
}

/** The configuration with project trust applied, or undefined (a warning said why) when it does not load. */
async function trustedConfig(options: GlobalOptions): Promise<TackConfig | undefined> {
  try {
    return await loadCliConfig(options);
  } catch (error) {
    if (!TackError.isInstance(error)) throw error;
    warn(`${error.message}; the listing shows the files as written`);
    return undefined;
  }
}

function listed(options: GlobalOptions, config: TackConfig | undefined): ListedRow[] {
  // Unknown (a file that does not load) or trusted: no entry is said to wait.
  const untrusted = config !== undefined && config.projectTrust?.verdict.trusted === false;
  // As written, yet a literal key in a command line or a URL's password is masked: a listing gets pasted.
  return listServerEntries(where(options)).map(({ entry: _entry, ...row }) => ({
    ...row,
    ...(row.command !== undefined ? { command: maskSecrets(row.command) as string } : {}),
    ...(row.args !== undefined ? { args: maskSecrets(row.args) as string[] } : {}),
    ...(row.url !== undefined ? { url: maskSecrets(row.url) as string } : {}),
    state: row.shadowedBy
      ? 'shadowed'
      : !row.enabled
        ? 'disabled'
        : untrusted && (row.scope === 'project' || row.scope === 'tack')
          ? 'untrusted'
          : 'ok',
  }));
}

function where(options: GlobalOptions) {
  return options.config ? { configFile: options.config } : {};
}

function scopeOf(options: { scope?: string }): { scope?: ServerScope } {
  if (options.scope === undefined) return {};
  if (!(SERVER_SCOPES as readonly string[]).includes(options.scope))
    throw new TackError(
      'USAGE',
      `--scope: expected project, tack or user, got ${JSON.stringify(options.scope)}`,
      {
        hint: "project: the project's .mcp.json (Claude Code reads it too); tack: its tack.json; user: your own config.json.",
      },
    );
  return { scope: options.scope as ServerScope };
}
