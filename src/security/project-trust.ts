import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  lstatSync,
  openSync,
  readlinkSync,
  readSync,
  type Stats,
  statSync,
} from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { TackError } from '../errors.js';
import type { TrustedProject } from '../store/trusted-projects.js';
import { sha256Hex } from '../util/canonical-json.js';
import { realOrUndefined } from '../util/fs-probe.js';
import { walkTree } from '../util/walk-tree.js';

/**
 * Project trust. A repository's tack.json, .mcp.json and skill folders are written by whoever wrote the
 * repository: its servers are commands that run on the user's machine, its hooks are shell lines, its allow rules
 * approve tool calls, its skills are instructions to the model. None of it runs until the user trusts the project
 * (`tack trust`), which records the SHA-256 of every such file; a file added, removed or changed since then makes
 * the project untrusted again, so a `git pull` cannot slip a new server in under an old approval.
 */

/** `TACK_TRUST_PROJECT=1`: trust whatever project this process runs in (CI, containers: the checkout is trusted). */
export const TRUST_PROJECT_ENV = 'TACK_TRUST_PROJECT';

/** The store's repository as far as trust needs it (`TackStore.trustedProjects` is one). */
export interface TrustRecords {
  get(root: string): Promise<TrustedProject | undefined>;
  set(root: string, files: Readonly<Record<string, string>>): Promise<TrustedProject>;
  delete(root: string): Promise<boolean>;
  list(): Promise<TrustedProject[]>;
}

/** Which files make up a project, for trust. */
export interface ProjectTrustScope {
  /** The project root (`TackConfig.projectRoot`): trust is recorded under it. */
  root: string;
  /**
   * Where skill discovery starts (default: the root). The project skill roots are `.agents/skills` and
   * `.claude/skills` in it and in each parent up to the repository root, exactly the ones discovery reads.
   */
  cwd?: string;
  /** The project's configuration files (default `<root>/.mcp.json` and `<root>/tack.json`). */
  configFiles?: readonly string[];
  /** Skill folders the project's files declare (`skills` in its tack.json): also the project's. */
  skillFolders?: readonly string[];
}

/** The trust-relevant files of a project as they are now. */
export interface ProjectFiles {
  root: string;
  /** Path relative to the root (`/`-separated; `../` for skill roots above it) -> SHA-256 hex. */
  files: Record<string, string>;
  /** The relative paths looked at (files and skill roots): a recorded file under one of them that is gone was removed. */
  scanned: string[];
  /** The relative skill roots and folders that hold at least one file. */
  skillRoots: string[];
  /** Set when a bound was reached: such a project cannot be trusted by its hashes. */
  problem?: string;
}

export interface FileChange {
  path: string;
  kind: 'added' | 'removed' | 'changed';
}

export interface ProjectTrustVerdict {
  trusted: boolean;
  root: string;
  /** Files added, removed or changed since the project was trusted (relative to the root). */
  changed: string[];
  /** The same, with what happened to each. */
  changes: FileChange[];
  /** No trust was ever recorded for this root. */
  neverTrusted: boolean;
  /**
   * Why it is trusted: the record matches (`record`), `TACK_TRUST_PROJECT=1` (`environment`), the caller said so
   * for this run (`option`, e.g. `--trust-project`), or the project has no file that trust covers (`nothing`).
   */
  basis: 'record' | 'environment' | 'option' | 'nothing' | undefined;
  /** The trust-relevant files now (relative); empty when trust came from the environment or an option. */
  files: string[];
  /** The relative skill roots and folders holding files; empty when not looked at. */
  skillRoots: string[];
  /** When the record was made. */
  trustedAt?: string;
  /** Why the project could not be checked (a bound reached, the store unavailable). */
  problem?: string;
}

export interface CheckTrustOptions {
  /** The records; a function is called only when the project has files to check (opening the store costs). */
  records?: TrustRecords | (() => Promise<TrustRecords | undefined>) | undefined;
  /** Environment for `TACK_TRUST_PROJECT` (default `process.env`). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Trust for this run, whatever the record says (`--trust-project`). */
  trustProject?: boolean;
}

/** Bounds on what one project's skill roots may hold: past them the project cannot be trusted by hash. */
export const TRUST_BOUNDS = { maxFiles: 10_000, maxBytes: 256 * 1024 * 1024, maxDepth: 16 } as const;

/** Entries that never reach the model or a script and change behind the user's back. */
const SKIP = new Set(['.git', '.DS_Store']);

/** Whether the environment trusts every project (`TACK_TRUST_PROJECT=1` or `true`). */
export function trustedByEnvironment(
  env: Readonly<Record<string, string | undefined>> = process.env,
): boolean {
  const value = env[TRUST_PROJECT_ENV]?.trim().toLowerCase();
  return value === '1' || value === 'true' || value === 'yes';
}

/**
 * The project skill roots discovery reads from `cwd`, nearest first. Must match `scopeRoots` in
 * skills/discover.ts (which this layer may not import): a root discovery reads and trust does not hash would
 * load unreviewed skills under an old approval.
 */
export function projectSkillRoots(cwd: string): string[] {
  const start = resolve(cwd);
  const top = repositoryRoot(start);
  const roots: string[] = [];
  for (let dir = start; ; dir = dirname(dir)) {
    roots.push(join(dir, '.agents', 'skills'), join(dir, '.claude', 'skills'));
    if (dir === top || dirname(dir) === dir) break;
  }
  return roots;
}

function repositoryRoot(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return cwd;
  }
}

/**
 * Hashes the project's trust-relevant files: its configuration files, and every file under its skill roots and
 * declared skill folders. Symlinks are recorded by their target, never followed (a skill root that is itself a
 * link is read where it leads, as discovery does); special files by their kind, never opened.
 */
export function projectFiles(scope: ProjectTrustScope): ProjectFiles {
  const root = resolve(scope.root);
  const rel = (path: string) => toRelative(root, path);
  const out: ProjectFiles = { root, files: {}, scanned: [], skillRoots: [] };
  let bytes = 0;
  let count = 0;
  const fail = (problem: string) => {
    out.problem ??= problem;
  };
  const hashInto = (path: string, name: string, stats: Stats) => {
    if (out.problem) return;
    if (++count > TRUST_BOUNDS.maxFiles) return fail(`more than ${TRUST_BOUNDS.maxFiles} files`);
    if (stats.isSymbolicLink()) {
      out.files[name] = sha256Hex(`symlink:${safeReadlink(path)}`);
      return;
    }
    if (!stats.isFile()) {
      out.files[name] = sha256Hex(`special:${kindOf(stats)}`);
      return;
    }
    bytes += stats.size;
    if (bytes > TRUST_BOUNDS.maxBytes)
      return fail(`more than ${TRUST_BOUNDS.maxBytes / 1024 / 1024} MiB of files`);
    out.files[name] = hashFile(path);
  };

  const configFiles = scope.configFiles ?? [join(root, '.mcp.json'), join(root, 'tack.json')];
  for (const file of configFiles) {
    const name = rel(file);
    out.scanned.push(name);
    // Read where it leads, as loadConfig does: the content is what counts.
    const stats = statOrUndefined(file, statSync);
    if (stats) hashInto(file, name, stats);
  }

  const seen = new Set<string>();
  const roots = [
    ...projectSkillRoots(scope.cwd ?? root),
    ...(scope.skillFolders ?? []).map((f) => resolve(f)),
  ];
  for (const dir of roots) {
    const name = rel(dir);
    const link = statOrUndefined(dir, lstatSync);
    if (!link) continue;
    out.scanned.push(name);
    let real = dir;
    if (link.isSymbolicLink()) {
      hashInto(dir, name, link);
      real = realOrUndefined(dir) ?? dir;
    }
    if (seen.has(real) || !statOrUndefined(real, statSync)?.isDirectory()) continue;
    seen.add(real);
    const before = Object.keys(out.files).length;
    walk(real, name);
    if (Object.keys(out.files).length > before) out.skillRoots.push(name);
  }
  if (out.problem) out.problem = `the project's skill folders hold ${out.problem}`;
  return out;

  /** Every entry below a skill folder, by the tree walk's rules (links hashed as links, never followed). */
  function walk(dir: string, name: string): void {
    const tree = walkTree(dir, {
      // Folders at depth maxDepth and below are refused, not skipped: a change there would go unseen.
      maxDepth: TRUST_BOUNDS.maxDepth - 1,
      skipDir: (entry) => SKIP.has(entry),
      onTooDeep: () => fail(`folders nested deeper than ${TRUST_BOUNDS.maxDepth}`),
    });
    try {
      for (const entry of tree) {
        if (out.problem) return;
        if (entry.kind === 'dir' || SKIP.has(entry.name)) continue;
        const stats = statOrUndefined(entry.path, lstatSync);
        if (stats) hashInto(entry.path, `${name}/${entry.rel}`, stats);
      }
    } catch {
      // The folder cannot be read (gone since it was checked): nothing of it is recorded.
    }
  }
}

/** What differs between a record and the files now, within what was scanned this time. */
export function compareProjectFiles(
  recorded: Readonly<Record<string, string>>,
  current: Pick<ProjectFiles, 'files' | 'scanned'>,
): FileChange[] {
  const inScope = (path: string) =>
    current.scanned.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  const changes: FileChange[] = [];
  for (const [path, hash] of Object.entries(current.files)) {
    const before = recorded[path];
    if (before === undefined) changes.push({ path, kind: 'added' });
    else if (before !== hash) changes.push({ path, kind: 'changed' });
  }
  for (const path of Object.keys(recorded))
    if (current.files[path] === undefined && inScope(path)) changes.push({ path, kind: 'removed' });
  return changes.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** Whether the project is trusted, and if not, what changed since it was. */
export async function checkProjectTrust(
  scope: ProjectTrustScope,
  options: CheckTrustOptions = {},
): Promise<ProjectTrustVerdict> {
  const root = resolve(scope.root);
  const verdict = (fields: Partial<ProjectTrustVerdict> & Pick<ProjectTrustVerdict, 'trusted'>) => ({
    root,
    changed: [],
    changes: [],
    neverTrusted: false,
    basis: undefined,
    files: [],
    skillRoots: [],
    ...fields,
  });
  if (options.trustProject) return verdict({ trusted: true, basis: 'option' });
  if (trustedByEnvironment(options.env)) return verdict({ trusted: true, basis: 'environment' });

  const current = projectFiles({ ...scope, root });
  const files = Object.keys(current.files).sort();
  const skillRoots = current.skillRoots;
  let record: TrustedProject | undefined;
  let recordsProblem: string | undefined;
  if (files.length > 0) {
    try {
      const records = typeof options.records === 'function' ? await options.records() : options.records;
      record = await records?.get(root);
    } catch (error) {
      recordsProblem = `the trust records could not be read (${error instanceof Error ? error.message : String(error)})`;
    }
  }
  if (files.length === 0)
    return verdict({ trusted: true, basis: 'nothing', neverTrusted: record === undefined });
  const problem = current.problem ?? recordsProblem;
  if (!record)
    return verdict({
      trusted: false,
      neverTrusted: true,
      files,
      skillRoots,
      ...(problem ? { problem } : {}),
    });
  const changes = compareProjectFiles(record.files, current);
  return verdict({
    trusted: changes.length === 0 && !current.problem,
    basis: changes.length === 0 && !current.problem ? 'record' : undefined,
    changed: changes.map((c) => c.path),
    changes,
    files,
    skillRoots,
    trustedAt: record.trustedAt,
    ...(current.problem ? { problem: current.problem } : {}),
  });
}

/**
 * Records the project as trusted with the hashes of its files now. Entries of the old record outside what was
 * scanned (skill roots seen from another working directory) are kept: trusting from one folder does not forget
 * what was trusted from another.
 */
export function recordProjectTrust(records: TrustRecords, scope: ProjectTrustScope): Promise<TrustedProject> {
  return recordProjectFiles(records, projectFiles(scope));
}

/**
 * Records `files` as they were hashed, not as they are by now: what a person reviewed (a summary made from the
 * same snapshot) is what gets trusted, and a file that changed in between makes the project ask again.
 */
export async function recordProjectFiles(
  records: TrustRecords,
  current: ProjectFiles,
): Promise<TrustedProject> {
  if (current.problem)
    throw new TackError(
      'PROJECT_UNTRUSTED',
      `${current.root}: cannot trust this project: ${current.problem}`,
      {
        subject: { file: current.root },
        hint: `Move large or generated files out of the skill folders, or set ${TRUST_PROJECT_ENV}=1 where the checkout is trusted as a whole.`,
      },
    );
  const previous = await records.get(current.root);
  const inScope = (path: string) =>
    current.scanned.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  const kept = Object.entries(previous?.files ?? {}).filter(([path]) => !inScope(path));
  const files = Object.fromEntries(
    [...kept, ...Object.entries(current.files)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  return records.set(current.root, files);
}

/** Forgets the trust of `root`; whether there was one. */
export function revokeProjectTrust(records: TrustRecords, root: string): Promise<boolean> {
  return records.delete(resolve(root));
}

export function listTrustedProjects(records: TrustRecords): Promise<TrustedProject[]> {
  return records.list();
}

function toRelative(root: string, path: string): string {
  const rel = relative(root, resolve(path));
  return (rel === '' ? '.' : rel).split(sep).join('/');
}

/** Streams the file through the hash: skill assets can be large, and only their digest is kept. */
function hashFile(path: string): string {
  const hash = createHash('sha256');
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (error) {
    // Unreadable now: recorded as such, so becoming readable (with content) counts as a change.
    return sha256Hex(`unreadable:${(error as NodeJS.ErrnoException).code ?? 'error'}`);
  }
  try {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      const n = readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    closeSync(fd);
  }
  return hash.digest('hex');
}

function statOrUndefined(path: string, stat: (path: string) => Stats): Stats | undefined {
  try {
    return stat(path);
  } catch {
    return undefined;
  }
}

function safeReadlink(path: string): string {
  try {
    return readlinkSync(path);
  } catch {
    return '';
  }
}

function kindOf(stats: Stats): string {
  if (stats.isDirectory()) return 'directory';
  if (stats.isFIFO()) return 'fifo';
  if (stats.isSocket()) return 'socket';
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return 'device';
  return 'other';
}
