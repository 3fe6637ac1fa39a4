import { closeSync, type Dirent, existsSync, fstatSync, openSync, readdirSync, readSync } from 'node:fs';
import { realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { isDirectory, realOrUndefined } from '../util/fs-probe.js';
import { MAX_SKILL_BYTES, parseSkill, SKILL_FILE, type SkillSource } from './skill.js';

/**
 * Where skills come from, in precedence order (the first wins a name):
 *   1. project: `.agents/skills/` then `.claude/skills/` in the working directory, then in each parent up to
 *      the repository root (the nearest directory first);
 *   2. user: `~/.agents/skills/` then `~/.claude/skills/`;
 *   3. config: the folders under `skills` in tack.json / the user config, in the order given.
 * Project skills come from a repository the user may not trust: they load only when the project is trusted.
 */
export type SkillScope = 'project' | 'user' | 'config';

export interface ScopeRoot {
  scope: SkillScope;
  dir: string;
}

/** Where discovery looks (the project, the user's folders, extra roots) and its bounds per scope. */
export interface DiscoverOptions {
  /** Working directory (default `process.cwd()`). */
  cwd?: string;
  /** Home directory for the user scope (default `$HOME`). */
  home?: string;
  /** Folders from the configuration, absolute. */
  configFolders?: readonly string[];
  /** Load project skills (default false: a repository's skills are code from someone else). */
  trustProject?: boolean;
  /** How deep below a scope root a skill folder may be (default 4). */
  maxDepth?: number;
  /** How many skill folders one scope may hold before the rest is ignored (default 20,000). */
  maxSkillsPerScope?: number;
}

/** One skill found on disk: its folder, SKILL.md, scope and front matter, before the body is read. */
export interface DiscoveredSkill {
  source: SkillSource;
  scope: SkillScope;
  root: string;
}

export interface Discovery {
  /** The winners, in precedence order. */
  skills: DiscoveredSkill[];
  /** Collisions, skipped scopes and folders, bounds reached: each a sentence naming the paths. */
  warnings: string[];
  /** The roots looked at, in precedence order, and whether each was read. */
  roots: Array<ScopeRoot & { loaded: boolean; reason?: string }>;
}

const SKIP = new Set(['.git', 'node_modules']);
/** Front matter is read from the head of SKILL.md only: a body is not read until the skill is activated. */
const HEAD_BYTES = 4096;
const MAX_HEAD_BYTES = 256 * 1024;

/** The scope roots in precedence order (existing or not). */
export function scopeRoots(options: DiscoverOptions = {}): ScopeRoot[] {
  const cwd = resolve(options.cwd ?? process.cwd());
  const home = options.home ?? process.env.HOME ?? '';
  const roots: ScopeRoot[] = [];
  const top = repositoryRoot(cwd);
  for (let dir = cwd; ; dir = dirname(dir)) {
    roots.push(
      { scope: 'project', dir: join(dir, '.agents', 'skills') },
      { scope: 'project', dir: join(dir, '.claude', 'skills') },
    );
    if (dir === top || dirname(dir) === dir) break;
  }
  if (home)
    roots.push(
      { scope: 'user', dir: join(home, '.agents', 'skills') },
      { scope: 'user', dir: join(home, '.claude', 'skills') },
    );
  for (const folder of options.configFolders ?? []) roots.push({ scope: 'config', dir: resolve(folder) });
  return roots;
}

/** The nearest ancestor holding `.git`; the working directory itself when there is none. */
function repositoryRoot(cwd: string): string {
  for (let dir = cwd; ; dir = dirname(dir)) {
    if (existsSync(join(dir, '.git'))) return dir;
    if (dirname(dir) === dir) return cwd;
  }
}

/** Every skill folder in the scopes, front matter only, with the warnings for what was skipped and why. */
export async function discoverSkills(options: DiscoverOptions = {}): Promise<Discovery> {
  const discovery: Discovery = { skills: [], warnings: [], roots: [] };
  const byName = new Map<string, DiscoveredSkill>();
  const seenRoots = new Set<string>();
  for (const root of scopeRoots(options)) {
    const real = await realpath(root.dir).catch(() => undefined);
    if (
      !real ||
      !(await stat(real).then(
        (s) => s.isDirectory(),
        () => false,
      ))
    ) {
      discovery.roots.push({ ...root, loaded: false, reason: 'does not exist' });
      // The default places are optional; a folder the configuration names is expected to be there.
      if (root.scope === 'config')
        discovery.warnings.push(`${root.dir}: skills folder named in the configuration does not exist`);
      continue;
    }
    if (seenRoots.has(real)) {
      discovery.roots.push({ ...root, loaded: false, reason: 'already read' });
      continue;
    }
    seenRoots.add(real);
    if (root.scope === 'project' && !options.trustProject) {
      discovery.roots.push({ ...root, loaded: false, reason: 'project not trusted' });
      discovery.warnings.push(
        `${root.dir}: project skills are not loaded until the project is trusted (tack trust, or --trust-project for one run)`,
      );
      continue;
    }
    discovery.roots.push({ ...root, loaded: true });
    for (const source of await findSkills(real, options, discovery.warnings)) {
      const name = source.name ?? relative(real, source.dir).split(sep).join('/');
      const earlier = byName.get(name);
      if (earlier) {
        discovery.warnings.push(
          `skill '${name}' in ${source.dir} is shadowed by ${earlier.source.dir} (${earlier.scope} scope wins)`,
        );
        continue;
      }
      const found = { source, scope: root.scope, root: real };
      byName.set(name, found);
      discovery.skills.push(found);
    }
  }
  return discovery;
}

/**
 * Skills below `root`: folders holding a file named exactly SKILL.md, dot-folders, `.git` and `node_modules`
 * skipped, at most `maxDepth` levels, at most `maxSkillsPerScope` skills, symlinks followed only when they stay
 * in `root`. A skill folder is not searched for nested skills (its subfolders are its scripts, references and
 * assets). Each SKILL.md is read up to the end of its front matter only. Every folder is walked once, by its real
 * path: a second link to a folder already walked is passed over, and a link back to a folder it is in (a loop)
 * is not followed and is reported once, as a loop. Folders below `maxDepth` are not searched; one warning per
 * root counts them and names the first, since a skill there is ignored.
 *
 * Synchronous file system calls, yielding to the event loop every few hundred: measured on 10,000 skills
 * (bench/skills.ts), the promise API's per-call overhead made discovery four times slower, and one open of
 * `<dir>/SKILL.md` per folder replaces a readdir of every skill folder.
 */
export async function findSkills(
  root: string,
  options: Pick<DiscoverOptions, 'maxDepth' | 'maxSkillsPerScope'>,
  warnings: string[],
): Promise<SkillSource[]> {
  const maxDepth = options.maxDepth ?? 4;
  const limit = options.maxSkillsPerScope ?? 20_000;
  const found: SkillSource[] = [];
  /** Real paths of the folders walked (root is real, and a followed link is replaced by its real path). */
  const walked = new Set<string>();
  /** The folders from root to the one walked now: a link to one of them, or to a folder above one, loops. */
  const path = new Set<string>();
  const tooDeep: string[] = [];
  let calls = 0;
  const breathe = async () => {
    if (++calls % 256 === 0) await new Promise((resolve) => setImmediate(resolve));
  };
  const walk = async (dir: string, depth: number): Promise<void> => {
    if (found.length >= limit || walked.has(dir)) return;
    walked.add(dir);
    await breathe();
    if (depth > 0) {
      const head = readHead(dir);
      if (head !== undefined) {
        const source = parseSkill(dir, head.text);
        found.push(head.size > MAX_SKILL_BYTES ? { ...source, oversized: head.size } : source);
        return;
      }
    }
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    path.add(dir);
    try {
      await walkEntries(dir, depth, entries);
    } finally {
      path.delete(dir);
    }
  };
  const walkEntries = async (dir: string, depth: number, entries: Dirent[]): Promise<void> => {
    for (const entry of entries) {
      if (entry.name.startsWith('.') || SKIP.has(entry.name)) continue;
      let target = join(dir, entry.name);
      if (depth >= maxDepth) {
        // Not searched: counted, so a skill nested too deep is not ignored in silence.
        if (entry.isDirectory() || (entry.isSymbolicLink() && isDirectory(target))) tooDeep.push(target);
        continue;
      }
      if (entry.isSymbolicLink()) {
        const real = realOrUndefined(target);
        if (!real || (real !== root && !real.startsWith(root + sep))) {
          warnings.push(`${target}: symlink leads outside ${root}; not followed`);
          continue;
        }
        if (!isDirectory(real)) continue;
        if (path.has(real) || real === dir || dir.startsWith(real + sep)) {
          warnings.push(
            `${target}: symlink loop (it leads back to ${real}, a folder it is reached through); not followed`,
          );
          continue;
        }
        target = real;
      } else if (!entry.isDirectory()) continue;
      if (found.length >= limit) {
        warnings.push(`${root}: more than ${limit} skills; the rest are ignored`);
        return;
      }
      await walk(target, depth + 1);
    }
  };
  await walk(root, 0);
  if (tooDeep.length > 0)
    warnings.push(
      `${root}: ${tooDeep.length} folder${tooDeep.length === 1 ? ' is' : 's are'} more than ${maxDepth} levels deep and not searched for skills (the first: ${tooDeep[0]}); a skill there is ignored: move it up, or name its parent folder under "skills" in tack.json`,
    );
  return found;
}

/** The skill folders below `root` (see findSkills). */
export async function skillFolders(
  root: string,
  options: Pick<DiscoverOptions, 'maxDepth' | 'maxSkillsPerScope'>,
  warnings: string[],
): Promise<string[]> {
  return (await findSkills(root, options, warnings)).map((skill) => skill.dir);
}

/**
 * The head of `<dir>/SKILL.md`: up to the closing `---` of its front matter (or the first block when it opens
 * without one), and the file's size. Undefined when the folder has no file named exactly SKILL.md.
 */
function readHead(dir: string): { text: string; size: number } | undefined {
  let fd: number;
  try {
    fd = openSync(join(dir, SKILL_FILE), 'r');
  } catch {
    return undefined;
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return undefined;
    // Case-insensitive file systems open skill.md for SKILL.md: check the exact name there.
    if (CASE_INSENSITIVE && !readdirSync(dir).includes(SKILL_FILE)) return undefined;
    let text = '';
    const buffer = Buffer.allocUnsafe(HEAD_BYTES);
    // A character split across two reads must not become two replacement characters.
    const decoder = new StringDecoder('utf8');
    for (let position = 0; position < MAX_HEAD_BYTES; ) {
      const bytesRead = readSync(fd, buffer, 0, HEAD_BYTES, position);
      text += decoder.write(buffer.subarray(0, bytesRead));
      position += bytesRead;
      if (
        bytesRead < HEAD_BYTES ||
        !/^\uFEFF?---\r?\n/.test(text) ||
        /\n---[ \t]*\r?(\n|$)/.test(text.slice(3))
      )
        break;
    }
    return { text: text + decoder.end(), size: info.size };
  } finally {
    closeSync(fd);
  }
}

const CASE_INSENSITIVE = process.platform === 'darwin' || process.platform === 'win32';
