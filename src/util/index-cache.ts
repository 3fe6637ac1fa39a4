import { readCacheFile, writeCacheFile } from './cache-file.js';
import { packEntries } from './text-index.js';

/**
 * The one format and loader of the search-index caches (the docs server's, docs/index-cache.ts, and the knowledge
 * bundles', knowledge/bundle-cache.ts): a cache file (cache-file.ts) whose `meta` section holds the folder it was
 * made for, the index's fields, its term table and one record per file (a JSON array whose first element is the
 * file's path), and whose `offsets` and `entries` sections hold each record's index entry back to back.
 *
 * One policy for what is wrong in it: a cache that is damaged, foreign, of another format, or holds one malformed
 * record is not used at all. The loader returns the problem, the caller warns (INDEX_CACHE) and builds the index
 * afresh, which writes a good cache again. A cache is a cache: rebuilding costs one cold start, and keeping part
 * of a file known to be damaged would trust the rest of it. A record that is well formed but does not fit its
 * file now (another digest, an offset past the text, a term id past the table) is not damage: that one file is
 * read afresh by the caller, and the rest of the cache is used.
 */

export interface IndexCacheSpec<R> {
  kind: string;
  version: number;
  /** The folder the cache is for, as written in it. */
  root: string;
  /** The index's field names, as written in it. */
  fields: readonly string[];
  /** What the cache must be, for the message when it is another's ("a cache of the bundle /x"). */
  of: string;
  /** The record a row holds (its path and contents), or undefined when the row is malformed. */
  record(row: unknown): [path: string, record: R] | undefined;
}

export interface LoadedIndexCache<R> {
  /** By path, each with its index entry (a view into the file's entries). */
  records: Map<string, R & { entry: Uint32Array }>;
  /** The term table the entries' term ids index. */
  terms: string[];
}

/** The cache at `file`: none and no problem when there is none yet; a problem (for a warning) when unusable. */
export function loadIndexCache<R>(
  file: string,
  spec: IndexCacheSpec<R>,
): { cache?: LoadedIndexCache<R>; problem?: string } {
  const read = readCacheFile(file, { kind: spec.kind, version: spec.version });
  if (!read.ok) return read.reason === 'missing' ? {} : { problem: read.message };
  const meta = (read.sections.get('meta') as { json?: unknown } | undefined)?.json as
    | { root?: unknown; fields?: unknown; terms?: unknown; records?: unknown }
    | undefined;
  const offsets = read.sections.get('offsets');
  const entries = read.sections.get('entries');
  if (
    !meta ||
    meta.root !== spec.root ||
    JSON.stringify(meta.fields) !== JSON.stringify(spec.fields) ||
    !Array.isArray(meta.terms) ||
    !meta.terms.every((t) => typeof t === 'string') ||
    !Array.isArray(meta.records) ||
    !(offsets instanceof Uint32Array) ||
    !(entries instanceof Uint32Array) ||
    offsets.length !== meta.records.length + 1
  )
    return { problem: `${file} is not ${spec.of}` };
  const records = new Map<string, R & { entry: Uint32Array }>();
  for (const [i, row] of (meta.records as unknown[]).entries()) {
    const from = offsets[i]!;
    const to = offsets[i + 1]!;
    const parsed = from <= to && to <= entries.length ? spec.record(row) : undefined;
    if (!parsed) return { problem: `${file}: record ${i} is malformed` };
    records.set(parsed[0], { ...parsed[1], entry: entries.subarray(from, to) });
  }
  return { cache: { records, terms: meta.terms as string[] } };
}

/** Writes an index cache (never throws; a failure is returned for a warning). Each row's first element is its path. */
export function saveIndexCache(
  file: string,
  spec: Pick<IndexCacheSpec<unknown>, 'kind' | 'version' | 'root' | 'fields'>,
  terms: readonly string[],
  rows: ReadonlyArray<{ row: readonly unknown[]; entry: Uint32Array }>,
): { ok: boolean; message?: string } {
  return writeCacheFile(file, spec.kind, spec.version, {
    meta: { json: { root: spec.root, fields: spec.fields, terms, records: rows.map((r) => r.row) } },
    ...packEntries(rows.map((r) => r.entry)),
  });
}
