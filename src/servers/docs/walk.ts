import { lstatSync } from 'node:fs';
import { relative } from 'node:path';
import { errorMessage } from '../../errors.js';
import { isDocFile } from '../../util/doc-files.js';
import { walkTree } from '../../util/walk-tree.js';
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

/**
 * Every document file below `root`, depth first, in a stable (sorted) order, within the caps: a file over
 * `docsFileBytes` is skipped (sized by `lstat`, never read), a folder more than `docsDepth` levels below the root
 * is not read, and the walk ends once it has found `docsFiles` documents (`x.md` and `x.mdx` are one). The walk's
 * rules are util/walk-tree.ts's: links are not followed (a link to a folder cannot loop the walk); only the root
 * must be readable, any other folder that cannot be read is a warning.
 */
export async function listDocFiles(root: string, given: Partial<DocsLimits> = {}): Promise<DocListing> {
  const limits = docsLimits(given);
  const files: DocFile[] = [];
  const slugs = new Set<string>();
  const warnings = new Warnings();
  let tooDeep = 0;
  let firstTooDeep: string | undefined;
  let stopped = false;
  const walk = walkTree(root, {
    maxDepth: limits.docsDepth,
    onTooDeep: (path) => {
      tooDeep++;
      firstTooDeep ??= path;
    },
    onUnreadable: (path, error) => warnings.add(`skipped the folder ${path}: ${errorMessage(error)}`),
  });
  for (const { path, name, kind } of walk) {
    if (kind !== 'file' || !isDocFile(name)) continue;
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
