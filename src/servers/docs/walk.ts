import type { Dirent } from 'node:fs';
import { lstatSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { errorMessage } from '../../errors.js';
import { isDocFile, isSkippedDir } from '../../util/doc-files.js';
import { compareText } from '../../util/text-order.js';
import { slugOf } from './corpus.js';
import { type DocsLimits, docsLimits, docTooLarge, skipWarning, Warnings } from './limits.js';

/** A document file found below the folder, with its size when it was listed. */
export interface DocFile {
  path: string;
  bytes: number;
}

export interface DocListing {
  /** Depth first, in a stable (sorted) order; none over `docsFileBytes`, at most `docsFiles` slugs. */
  files: DocFile[];
  /** Files skipped and folders not read, by name (a bounded number of them). */
  warnings: string[];
  /** The walk stopped at `docsFiles` documents: the rest of the folder was not read. */
  stopped: boolean;
}

interface Frame {
  dir: string;
  depth: number;
  entries: Dirent[];
  next: number;
}

/**
 * Every document file below `root`, depth first, in a stable (sorted) order, within the caps: a file over
 * `docsFileBytes` is skipped (sized by `lstat`, never read), a folder more than `docsDepth` levels below the root
 * is not read, and the walk ends once it has found `docsFiles` documents (`x.md` and `x.mdx` are one). Links are
 * not followed (a link to a folder cannot loop the walk); only the root must be readable, any other folder that
 * cannot be read is a warning.
 */
export async function listDocFiles(root: string, given: Partial<DocsLimits> = {}): Promise<DocListing> {
  const limits = docsLimits(given);
  const files: DocFile[] = [];
  const slugs = new Set<string>();
  const warnings = new Warnings();
  let tooDeep = 0;
  let firstTooDeep: string | undefined;
  let stopped = false;
  // Frames on a list, not recursion: a tree thousands of levels deep costs neither stack nor a path too long
  // to open, and only the open folders' entries are held.
  const stack: Frame[] = [];
  // Synchronous calls: 10,000 promise round trips for lstat took twice as long as the whole warm start
  // (bench/docs.ts), and the walk runs once, before the library serves anything.
  const enter = (dir: string, depth: number) => {
    const entries = readdirSync(dir, { withFileTypes: true });
    entries.sort((a, b) => compareText(a.name, b.name));
    stack.push({ dir, depth, entries, next: 0 });
  };
  enter(root, 0);
  while (stack.length > 0) {
    const frame = stack[stack.length - 1]!;
    const entry = frame.entries[frame.next++];
    if (!entry) {
      stack.pop();
      continue;
    }
    const path = join(frame.dir, entry.name);
    if (entry.isDirectory()) {
      if (isSkippedDir(entry.name)) continue;
      if (frame.depth + 1 > limits.docsDepth) {
        tooDeep++;
        firstTooDeep ??= path;
        continue;
      }
      try {
        enter(path, frame.depth + 1);
      } catch (error) {
        warnings.add(`skipped the folder ${path}: ${errorMessage(error)}`);
      }
    } else if (entry.isFile() && isDocFile(entry.name)) {
      const slug = slugOf(root, path);
      if (!slugs.has(slug) && slugs.size >= limits.docsFiles) {
        stopped = true;
        break;
      }
      let bytes: number | undefined;
      try {
        bytes = lstatSync(path).size;
      } catch {
        bytes = undefined; // gone since the folder was read
      }
      if (bytes === undefined) continue;
      if (bytes > limits.docsFileBytes) {
        warnings.add(skipWarning(docTooLarge(path, bytes, limits.docsFileBytes)));
        continue;
      }
      slugs.add(slug);
      files.push({ path, bytes });
    }
  }
  if (tooDeep > 0 && firstTooDeep) {
    warnings.add(
      `did not read ${tooDeep} folder${tooDeep === 1 ? '' : 's'} more than ${limits.docsDepth} levels below ` +
        `${root}, the first ${elide(relative(root, firstTooDeep))}: ` +
        'raise limits.docsDepth in tack.json to read deeper',
    );
  }
  if (stopped) warnings.add(countCapWarning(root, limits.docsFiles));
  return { files, warnings: warnings.list(), stopped };
}

/** The message when `docsFiles` ends indexing. */
export function countCapWarning(root: string, cap: number): string {
  return (
    `stopped indexing ${root} at ${cap.toLocaleString('en-US')} documents, the cap; the rest are not served: ` +
    'raise limits.docsFiles in tack.json to index more'
  );
}

/** A path short enough for one line of a warning: its start and its end. */
function elide(path: string, max = 160): string {
  return path.length <= max ? path : `${path.slice(0, max / 2)}...${path.slice(-max / 2)}`;
}
