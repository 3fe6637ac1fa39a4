import { readFileSync } from 'node:fs';
import { relative, resolve, sep } from 'node:path';
import { projectTrustScope } from '../config/apply-trust.js';
import { loadConfig, type ServerConfig, type TackConfig } from '../config/load.js';
import type { HookEvent } from '../config/schema.js';
import { TackError } from '../errors.js';
import {
  compareProjectFiles,
  type FileChange,
  type ProjectFiles,
  projectFiles,
  recordProjectFiles,
  type TrustRecords,
} from '../security/project-trust.js';
import { discoverSkills } from '../skills/discover.js';
import type { TrustedProject } from '../store/trusted-projects.js';
import { isRecord } from '../util/is-record.js';

/**
 * What trusting a project would let run, for a person to read before saying yes (`tack trust`, a console):
 * reviewProject makes it, trustReviewedProject records exactly the files it was made from. Here rather than in
 * security/ because it reads the configuration and discovers skills, which that layer does not know.
 */
export interface ProjectReview extends ProjectFiles {
  /** Servers the project's .mcp.json and tack.json declare. */
  servers: ReviewedServer[];
  /** Shell lines the project's tack.json runs around tool calls. */
  hooks: ReviewedHook[];
  /** Tool calls the project's tack.json approves without asking. */
  allow: string[];
  /** Skills from the project's skill roots and from the skill folders its tack.json lists. */
  skills: ReviewedSkill[];
  /** The record made when the project was trusted before, and what changed since. */
  previous?: { trustedAt: string; changes: FileChange[] };
  /** Trusted already, with no file changed since: recording again would change nothing. */
  trusted: boolean;
}

export interface ReviewedServer {
  name: string;
  /** The file that declares it, relative to the root. */
  file: string;
  transport: ServerConfig['transport'];
  /** stdio: the command line as the file writes it (`${VAR}` unexpanded), shell-quoted. */
  command?: string;
  /** stdio: the folder it runs in, when the entry names one (as written). */
  cwd?: string;
  /** http, sse: the URL as the file writes it. */
  url?: string;
  /** Names of the environment variables it gets (stdio) or headers it sends (http): never their values. */
  env: string[];
  headers: string[];
  /** `enabled: false` in the file: it would not start even once trusted. */
  enabled: boolean;
}

export interface ReviewedHook {
  event: HookEvent;
  matcher?: string;
  command: string;
}

export interface ReviewedSkill {
  name: string;
  /** Its folder, relative to the root. */
  folder: string;
}

export interface ReviewProjectOptions {
  /** The folder to review from (default `process.cwd()`): the project root is found from it, skills seen from it. */
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** The trust records, to say whether and when the project was trusted and what changed since. */
  records?: TrustRecords;
}

/**
 * Everything trusting the project at `cwd` would let run, read from its files: servers with their command lines or
 * URLs, hooks, allow rules, skills, and the files trust covers with their hashes. Records nothing. A project
 * whose files do not load is a CONFIG_INVALID error with every problem named: it must be fixed before it is
 * trusted, and what it runs cannot be shown otherwise.
 */
export async function reviewProject(options: ReviewProjectOptions = {}): Promise<ProjectReview> {
  const cwd = resolve(options.cwd ?? process.cwd());
  const load = () => loadConfig({ cwd, ...(options.env ? { env: options.env } : {}) });
  // The files are hashed before and after they are read for the summary: when both agree, the summary shows
  // what the hashes record, and a file changed in the middle cannot be trusted unseen.
  const first = projectFiles(projectTrustScope(load(), cwd));
  const config = load();
  const summary = await describe(config, cwd);
  const files = projectFiles(projectTrustScope(config, cwd));
  if (!sameFiles(first, files))
    throw new TackError('PROJECT_UNTRUSTED', `${files.root}: the project's files changed while being read`, {
      subject: { file: files.root },
      hint: 'Run `tack trust` again once nothing is writing to the project.',
    });
  const record = await options.records?.get(files.root);
  const changes = record ? compareProjectFiles(record.files, files) : [];
  return {
    ...files,
    ...summary,
    ...(record ? { previous: { trustedAt: record.trustedAt, changes } } : {}),
    trusted: record !== undefined && changes.length === 0 && files.problem === undefined,
  };
}

/**
 * Records the project as trusted with the hashes the review was made from. A PROJECT_UNTRUSTED error when the
 * review found a bound reached (`review.problem`).
 */
export function trustReviewedProject(records: TrustRecords, review: ProjectReview): Promise<TrustedProject> {
  return recordProjectFiles(records, review);
}

async function describe(
  config: TackConfig,
  cwd: string,
): Promise<Pick<ProjectReview, 'servers' | 'hooks' | 'allow' | 'skills'>> {
  const root = config.projectRoot;
  const raw = new Map<string, Record<string, unknown>>();
  const servers = config.servers
    .filter((s) => s.source.scope === 'project')
    .map((s) => asWritten(s, root, raw));
  const hooks = (config.fromProject?.hooks ?? []).map(({ event, hook }) => ({
    event,
    ...(hook.matcher ? { matcher: hook.matcher } : {}),
    command: hook.command,
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
    name: s.source.name ?? toRelative(s.root, s.source.dir),
    folder: toRelative(root, s.source.dir),
  }));
  return { servers, hooks, allow: config.fromProject?.allow ?? [], skills };
}

/**
 * A server as its file writes it: `${TOKEN}` stays `${TOKEN}` rather than showing the secret it expands to, and
 * environment variables and headers are named, never given.
 */
function asWritten(
  server: ServerConfig,
  root: string,
  cache: Map<string, Record<string, unknown>>,
): ReviewedServer {
  const file = server.source.file;
  let parsed = cache.get(file);
  if (!parsed) {
    try {
      const value: unknown = JSON.parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, ''));
      parsed = isRecord(value) ? value : {};
    } catch {
      parsed = {};
    }
    cache.set(file, parsed);
  }
  const block = isRecord(parsed.mcpServers) ? parsed.mcpServers : {};
  const entry = isRecord(block[server.name]) ? (block[server.name] as Record<string, unknown>) : {};
  const names = (value: unknown) => (isRecord(value) ? Object.keys(value) : []);
  const base = { name: server.name, file: toRelative(root, file), transport: server.transport };
  if (server.transport === 'stdio') {
    const command = typeof entry.command === 'string' ? entry.command : server.command;
    const args = Array.isArray(entry.args) ? entry.args.map(String) : server.args;
    return {
      ...base,
      command: [command, ...args].map(quote).join(' '),
      ...(typeof entry.cwd === 'string' ? { cwd: entry.cwd } : {}),
      env: names(entry.env),
      headers: [],
      enabled: server.enabled,
    };
  }
  return {
    ...base,
    url: typeof entry.url === 'string' ? entry.url : server.url,
    env: [],
    headers: names(entry.headers),
    enabled: server.enabled,
  };
}

function sameFiles(a: ProjectFiles, b: ProjectFiles): boolean {
  const keys = Object.keys(a.files);
  return (
    a.root === b.root &&
    a.problem === b.problem &&
    keys.length === Object.keys(b.files).length &&
    keys.every((key) => a.files[key] === b.files[key])
  );
}

function quote(word: string): string {
  return /^[\w@%+=:,./${}-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function toRelative(root: string, path: string): string {
  return (relative(root, path) || '.').split(sep).join('/');
}
