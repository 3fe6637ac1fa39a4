import { readFileSync } from 'node:fs';
import { relative, resolve } from 'node:path';
import { loadConfig, type ServerConfig, type TackConfig } from '../../config/load.js';
import { findProjectRoot, resolvePaths } from '../../config/paths.js';
import { projectTrustScope } from '../../config/trust.js';
import { TackError } from '../../errors.js';
import {
  compareProjectFiles,
  type FileChange,
  listTrustedProjects,
  projectFiles,
  recordProjectTrust,
  revokeProjectTrust,
} from '../../security/project-trust.js';
import { discoverSkills } from '../../skills/discover.js';
import { TackStore } from '../../store/store.js';
import { isDirectory } from '../../util/fs-probe.js';
import { print, printJson, table } from '../output.js';
import type { GlobalOptions } from '../session.js';

export interface TrustOptions extends GlobalOptions {
  list?: boolean;
  revoke?: boolean;
}

/**
 * `tack trust [dir]`: shows what the project would run (its files, servers with their command lines, hooks, allow
 * rules, skills), then records the hash of every file; `--list` shows the trusted projects and whether their
 * files changed; `--revoke` forgets one.
 */
export async function trustCommand(dir: string | undefined, options: TrustOptions): Promise<number> {
  if (options.config)
    throw new TackError('USAGE', '`tack trust` trusts a project folder, not a --config file', {
      hint: 'A file named with --config is trusted already: you chose it. Run `tack trust [dir]` for a project.',
    });
  if (options.list && options.revoke)
    throw new TackError('USAGE', '--list and --revoke do not go together', {
      hint: 'Run `tack trust --list` to see the projects, then `tack trust --revoke <dir>`.',
    });
  const cwd = resolve(dir ?? process.cwd());
  if (!options.list && !isDirectory(cwd))
    throw new TackError('USAGE', `${cwd}: not a folder`, {
      hint: 'Give the project folder: `tack trust <dir>`.',
    });
  const store = TackStore.open(resolvePaths().storeFile);
  try {
    if (options.list) return list(store, options);
    if (options.revoke) return revoke(store, cwd, options);
    return await trust(store, cwd, options);
  } finally {
    store.close();
  }
}

async function trust(store: TackStore, cwd: string, options: TrustOptions): Promise<number> {
  // A project whose files do not load is refused here with every problem named: it must be fixable before it is
  // trusted, and what it runs cannot be shown otherwise.
  const config = loadConfig({ cwd });
  const scope = projectTrustScope(config, cwd);
  const current = projectFiles(scope);
  const before = store.trustedProjects.get(current.root);
  const changes = before ? compareProjectFiles(before.files, current) : [];
  const review = await describeProject(config, cwd);
  const files = Object.keys(current.files).sort();
  if (files.length === 0) {
    if (options.json) printJson({ root: current.root, files: {}, trusted: false, ...review });
    else
      print(
        `Nothing to trust in ${current.root}: no tack.json, .mcp.json or project skills (.agents/skills, .claude/skills).`,
      );
    return 0;
  }
  const record = recordProjectTrust(store.trustedProjects, scope);
  if (options.json) {
    printJson({ root: record.root, trustedAt: record.trustedAt, files: record.files, changes, ...review });
    return 0;
  }
  const kindOf = new Map(changes.map((c) => [c.path, c.kind]));
  print(`Trusting ${record.root}`);
  section(`Files (${files.length})`, [
    ...files.map((file) => (before ? [file, kindOf.get(file) ?? 'unchanged'] : [file])),
    ...changes.filter((c) => c.kind === 'removed').map((c) => [c.path, 'removed']),
  ]);
  section(
    'Servers (they start as these commands)',
    review.servers.map((s) => [s.name, s.transport, s.run, s.file]),
  );
  section(
    'Hooks (shell lines run around tool calls)',
    review.hooks.map((h) => [h.event, h.command, h.matcher ?? '']),
  );
  section(
    'Allow rules (approve tool calls without asking)',
    review.allow.map((rule) => [rule]),
  );
  section(
    'Skills (instructions to the model, with their scripts)',
    review.skills.map((s) => [s.name, s.path]),
  );
  print(
    `\nTrusted: ${files.length} file${files.length === 1 ? '' : 's'} recorded. A file added, changed or removed makes tack ask again; \`tack trust --revoke\` forgets the project.`,
  );
  return 0;
}

function revoke(store: TackStore, cwd: string, options: TrustOptions): number {
  let root: string;
  try {
    root = loadConfig({ cwd }).projectRoot;
  } catch {
    // A broken file must not keep the user from withdrawing trust.
    root = findProjectRoot(cwd);
  }
  const removed = revokeProjectTrust(store.trustedProjects, root);
  if (options.json) printJson({ root, revoked: removed });
  else
    print(
      removed
        ? `Forgot ${root}: its servers, hooks, allow rules and skills wait for \`tack trust\` again.`
        : `${root} was not trusted.`,
    );
  return 0;
}

interface ListedProject {
  root: string;
  trustedAt: string;
  files: number;
  state: 'unchanged' | 'changed' | 'missing';
  changes: FileChange[];
}

function list(store: TackStore, options: TrustOptions): number {
  const rows: ListedProject[] = listTrustedProjects(store.trustedProjects).map((record) => {
    const base = { root: record.root, trustedAt: record.trustedAt, files: Object.keys(record.files).length };
    if (!isDirectory(record.root)) return { ...base, state: 'missing', changes: [] };
    let scope: ReturnType<typeof projectTrustScope>;
    try {
      scope = projectTrustScope(loadConfig({ cwd: record.root }), record.root);
    } catch {
      // An invalid file still has a hash: compare what can be compared.
      scope = { root: record.root, cwd: record.root };
    }
    const changes = compareProjectFiles(record.files, projectFiles({ ...scope, root: record.root }));
    return { ...base, state: changes.length > 0 ? 'changed' : 'unchanged', changes };
  });
  if (options.json) {
    printJson(rows);
    return 0;
  }
  if (rows.length === 0) {
    print('No trusted projects. Run `tack trust` in a project to trust it.');
    return 0;
  }
  print(
    table(
      ['ROOT', 'TRUSTED AT', 'FILES', 'STATE'],
      rows.map((r) => [
        r.root,
        r.trustedAt,
        String(r.files),
        r.state === 'changed'
          ? `changed: ${r.changes.map((c) => `${c.path} (${c.kind})`).join(', ')}`
          : r.state,
      ]),
    ),
  );
  return 0;
}

interface Review {
  servers: Array<{ name: string; transport: string; run: string; file: string }>;
  hooks: Array<{ event: string; command: string; matcher?: string }>;
  allow: string[];
  skills: Array<{ name: string; path: string }>;
}

/** What trusting the project lets run, as its files say it (command lines as written, before `${VAR}` expansion). */
async function describeProject(config: TackConfig, cwd: string): Promise<Review> {
  const raw = new Map<string, Record<string, unknown>>();
  const servers = config.servers
    .filter((s) => s.source.scope === 'project')
    .map((s) => ({
      name: s.name,
      transport: s.transport,
      run: `${asWritten(s, raw)}${s.enabled ? '' : ' (disabled in the file)'}`,
      file: relative(config.projectRoot, s.source.file),
    }));
  const hooks = (config.fromProject?.hooks ?? []).map(({ event, hook }) => ({
    event,
    command: hook.command,
    ...(hook.matcher ? { matcher: hook.matcher } : {}),
  }));
  // Every skill a trusted project adds: its skill roots seen from here, and the folders its files declare (no
  // user scope: those are the user's own).
  const discovery = await discoverSkills({
    cwd,
    home: '',
    trustProject: true,
    configFolders: config.fromProject?.skillFolders ?? [],
  });
  const skills = discovery.skills.map((s) => ({
    name: s.source.name ?? relative(s.root, s.source.dir),
    path: relative(cwd, s.source.dir) || '.',
  }));
  return { servers, hooks, allow: config.fromProject?.allow ?? [], skills };
}

/**
 * A server's command line or URL as its file writes it: `${TOKEN}` stays `${TOKEN}` rather than printing the
 * secret. Environment variables and headers are shown by name only, for the same reason.
 */
function asWritten(server: ServerConfig, cache: Map<string, Record<string, unknown>>): string {
  const file = server.source.file;
  let root = cache.get(file);
  if (!root) {
    try {
      const parsed: unknown = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
      root = isRecord(parsed) ? parsed : {};
    } catch {
      root = {};
    }
    cache.set(file, root);
  }
  const block = isRecord(root.mcpServers) ? root.mcpServers : {};
  const entry = isRecord(block[server.name]) ? (block[server.name] as Record<string, unknown>) : {};
  const names = (value: unknown) => (isRecord(value) ? Object.keys(value) : []);
  if (server.transport === 'stdio') {
    const command = typeof entry.command === 'string' ? entry.command : server.command;
    const args = Array.isArray(entry.args) ? entry.args.map(String) : server.args;
    const env = names(entry.env);
    return [
      [command, ...args].map(quote).join(' '),
      ...(typeof entry.cwd === 'string' ? [`(in ${entry.cwd})`] : []),
      ...(env.length > 0 ? [`(env: ${env.join(', ')})`] : []),
    ].join(' ');
  }
  const url = typeof entry.url === 'string' ? entry.url : server.url;
  const headers = names(entry.headers);
  return [url, ...(headers.length > 0 ? [`(headers: ${headers.join(', ')})`] : [])].join(' ');
}

function quote(word: string): string {
  return /^[\w@%+=:,./${}-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function section(title: string, rows: string[][]): void {
  if (rows.length === 0) return;
  print(`\n${title}:`);
  for (const line of table(
    rows[0]!.map(() => ''),
    rows,
  )
    .split('\n')
    .slice(1))
    print(`  ${line}`);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
