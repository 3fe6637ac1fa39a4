import { existsSync, realpathSync, statSync } from 'node:fs';
import { posix, resolve, sep } from 'node:path';

/** A URL (`https:`, `mailto:`, `bq:`), not a path into the bundle. Windows drive letters are not URLs. */
export function isUrl(target: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]+:/.test(target);
}

/**
 * Whether a path-valued field could be a path at all: `sources[].resource` may be a scope descriptor such as
 * "all queries in BigQuery project X" (§5.1), which has spaces and no file shape.
 */
export function looksLikePath(target: string): boolean {
  return !isUrl(target) && !/\s/.test(target.trim()) && target.trim() !== '';
}

export interface ResolvedPath {
  /** Bundle-relative, `/` separated, no leading `/`; a folder ends without `/`. */
  path: string;
  /** How it was found: `/x` is root-relative; a relative path tries the file's folder, then the root. */
  via: 'root' | 'file' | 'root-fallback';
  kind: 'file' | 'folder';
}

/**
 * Resolves a link or path-valued field (§6) written in `from` (a bundle-relative file path). `/x` is
 * bundle-relative; `x` and `./x` are file-relative first, then bundle-root-relative, since real bundles
 * (acme_retail's `executor.resource: skills/run-on-bq.md` in computations/) write root paths without the `/`.
 * Returns undefined for a target that exists in neither place or would leave the bundle.
 */
export function resolveInBundle(
  root: string,
  from: string,
  target: string,
  lookup: PathLookup = diskLookup(root),
): ResolvedPath | undefined {
  const clean = decodeTarget(target);
  if (clean === undefined) return undefined;
  const candidates: Array<[string, ResolvedPath['via']]> = clean.startsWith('/')
    ? [[posix.normalize(clean.slice(1)), 'root']]
    : [
        [posix.normalize(posix.join(posix.dirname(from), clean)), 'file'],
        [posix.normalize(clean), 'root-fallback'],
      ];
  for (const [candidate, via] of candidates) {
    const path = inBundle(candidate);
    if (path === undefined) continue;
    const kind = lookup(path);
    if (kind) return { path, via, kind };
  }
  return undefined;
}

/**
 * The bundle paths a target written in `from` may name, in the order resolveInBundle tries them: what resolving
 * needs of the text alone, so a loader can keep it and ask only the file list at the next load.
 */
export function candidatePaths(from: string, target: string): string[] {
  const clean = decodeTarget(target);
  if (clean === undefined) return [];
  const written = clean.startsWith('/')
    ? [posix.normalize(clean.slice(1))]
    : [posix.normalize(posix.join(posix.dirname(from), clean)), posix.normalize(clean)];
  const paths: string[] = [];
  for (const candidate of written) {
    const path = inBundle(candidate);
    if (path !== undefined && !paths.includes(path)) paths.push(path);
  }
  return paths;
}

/** A normalized candidate as a bundle path (no trailing `/`, `.` for the root as ''), or undefined outside it. */
function inBundle(candidate: string): string | undefined {
  const path = candidate.replace(/\/+$/, '').replace(/^\.$/, '');
  return path === '..' || path.startsWith('../') ? undefined : path;
}

/** Strips `#fragment` and `?query`, decodes %-escapes; undefined for a pure fragment or a broken escape. */
function decodeTarget(target: string): string | undefined {
  const bare = target.trim().replace(/[?#].*$/, '');
  if (bare === '') return undefined;
  try {
    return decodeURIComponent(bare);
  } catch {
    return bare;
  }
}

/** A `/`-separated path with each segment %-encoded: a link or URI that names exactly that path. */
export function encodePath(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/** What a bundle-relative path is: a file, a folder, or nothing in the bundle. */
export type PathLookup = (path: string) => 'file' | 'folder' | undefined;

/**
 * Asks the file system. A symlink out of the bundle is not part of it (the same rule as the docs and skills
 * servers). The loader does not use this: it answers from the files it walked, with no system call per link
 * (profiled: the calls took 57 % of loading 10,000 concepts).
 */
export function diskLookup(root: string): PathLookup {
  let realRoot: string | undefined;
  return (path) => {
    const full = resolve(root, path);
    if (!existsSync(full)) return undefined;
    realRoot ??= realpathSync(root);
    const real = realpathSync(full);
    if (real !== realRoot && !real.startsWith(realRoot + sep)) return undefined;
    return statSync(full).isDirectory() ? 'folder' : 'file';
  };
}

/** A relative path that leaves the bundle for a file that exists: a source outside (`init --from` writes these). */
export function existsOutside(root: string, from: string, target: string): boolean {
  if (target.startsWith('/') || isUrl(target)) return false;
  const path = posix.normalize(posix.join(posix.dirname(from), target.replace(/[?#].*$/, '')));
  return path.startsWith('../') && existsSync(resolve(root, path));
}
