import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { compareText } from './text-order.js';

/**
 * The one walk over a folder tree (docs server corpus, knowledge bundles, `tack knowledge init`, a skill's files,
 * project trust). Its rules, the same for every caller:
 *
 * - Skip list: folders that are hidden (`.` first), `node_modules` or `dist` are not entered (isSkippedDir). A
 *   caller that needs another list passes `skipDir`; files are never skipped here, the caller filters them.
 * - Depth: the root is depth 0; a folder deeper than `maxDepth` is not entered, and `onTooDeep` hears of it (so a
 *   caller can warn or refuse rather than miss files in silence). The default, DEFAULT_MAX_DEPTH, is deeper than
 *   any real docs, bundle or skill tree, and bounds the walk of a hostile one.
 * - Symlinks are never followed: one is yielded as a `link` entry, for the caller to record, resolve or skip. A
 *   walk can therefore neither loop nor leave the root.
 * - Order: depth first, each folder's entries in tack's text order (text-order.ts), so results are the same on
 *   every file system.
 * - Errors: the root must be readable (its error is thrown); a folder below it that cannot be read is passed to
 *   `onUnreadable` (default: skipped), which may throw to end the walk.
 *
 * Skill discovery (skills/discover.ts) keeps its own search, on purpose: it looks for skill folders rather than
 * content, follows a link that stays inside its scope (linking a skill into `.claude/skills` is how one is
 * shared), stops at a folder holding SKILL.md, and yields to the event loop while it scans a home folder.
 *
 * Iterative (a stack of open folders, not recursion), and synchronous: a tree thousands of levels deep costs no
 * stack, and 10,000 promise round trips for readdir/lstat cost more than a whole warm start (bench/docs.ts).
 */

export const DEFAULT_MAX_DEPTH = 32;

/** Folders never entered unless a caller says otherwise: dependencies, build output and anything hidden. */
export function isSkippedDir(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules' || name === 'dist';
}

export interface TreeEntry {
  /** The full path (the root joined with `rel`). */
  path: string;
  /** The path below the root, `/`-separated. */
  rel: string;
  name: string;
  kind: 'file' | 'dir' | 'link' | 'other';
  /** How many levels below the root the entry is (1: directly in it). */
  depth: number;
  dirent: Dirent;
}

export interface WalkTreeOptions {
  /** Deepest folder entered (the root is 0); default DEFAULT_MAX_DEPTH. */
  maxDepth?: number;
  /** Folders not entered (nor yielded); default isSkippedDir. */
  skipDir?: (name: string, path: string) => boolean;
  /** A folder not entered for being deeper than `maxDepth`. */
  onTooDeep?: (path: string) => void;
  /** A folder below the root that could not be read; default: skipped. */
  onUnreadable?: (path: string, error: unknown) => void;
}

interface Frame {
  path: string;
  rel: string;
  depth: number;
  entries: Dirent[];
  next: number;
}

/** Every entry below `root` by the rules above: files, links and other entries, and each folder before its contents. */
export function* walkTree(root: string, options: WalkTreeOptions = {}): Generator<TreeEntry> {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const skipDir = options.skipDir ?? isSkippedDir;
  const read = (path: string) =>
    readdirSync(path, { withFileTypes: true }).sort((a, b) => compareText(a.name, b.name));
  const stack: Frame[] = [{ path: root, rel: '', depth: 0, entries: read(root), next: 0 }];
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const dirent = frame.entries[frame.next++];
    if (!dirent) {
      stack.pop();
      continue;
    }
    const { name } = dirent;
    const path = join(frame.path, name);
    const rel = frame.rel ? `${frame.rel}/${name}` : name;
    const depth = frame.depth + 1;
    if (!dirent.isDirectory()) {
      const kind = dirent.isSymbolicLink() ? 'link' : dirent.isFile() ? 'file' : 'other';
      yield { path, rel, name, kind, depth, dirent };
      continue;
    }
    if (skipDir(name, path)) continue;
    if (depth > maxDepth) {
      options.onTooDeep?.(path);
      continue;
    }
    let entries: Dirent[];
    try {
      entries = read(path);
    } catch (error) {
      options.onUnreadable?.(path, error);
      continue;
    }
    yield { path, rel, name, kind: 'dir', depth, dirent };
    stack.push({ path, rel, depth, entries, next: 0 });
  }
}
