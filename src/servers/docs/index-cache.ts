import { join, relative, sep } from 'node:path';
import { cacheFileName } from '../../util/cache-file.js';
import { type IndexCacheSpec, loadIndexCache, saveIndexCache } from '../../util/index-cache.js';
import { snapshotEntry, type TermMapping, type TextIndex } from '../../util/text-index.js';
import type { Doc } from './corpus.js';

/**
 * The docs library's index, kept in the state directory (`<state>/indexes/docs-<hash of the folder>.idx`) so a
 * warm start reads what it indexed last time instead of parsing and tokenizing every document again. Each
 * document is keyed by its file (below the folder) and the SHA-256 of its bytes: the files are read at every
 * start (that is how a change is seen, whatever their times say), and a file whose digest matches takes its
 * title, description, word count and index entry from the cache; any other is parsed and indexed afresh, and a
 * file that is gone is dropped. Everything cached is a function of one file's bytes, so nothing in it can go
 * stale when another file changes. Bump VERSION whenever what is cached, or how it is computed, changes.
 */
export const DOCS_CACHE_KIND = 'docs';
export const DOCS_CACHE_VERSION = 1;

/** What the cache keeps of one document besides its index entry. */
export interface DocRecord {
  digest: string;
  /** Where `markdown` starts in the normalized text (normalizedSource): the front matter is not read again. */
  bodyStart: number;
  words: number;
  title: string;
  description: string;
  entry: Uint32Array;
}

/** The digest and body offset of a document as the library read it: what its record is written with. */
export interface DocOrigin {
  digest: string;
  bodyStart: number;
}

export interface LoadedDocsCache {
  /** By path below the folder, `/`-separated. */
  records: Map<string, DocRecord>;
  mapping: TermMapping;
}

type RecordTuple = [
  path: string,
  digest: string,
  bodyStart: number,
  words: number,
  title: string,
  description: string,
];

export function docsCacheFile(cacheDir: string, realRoot: string): string {
  return join(cacheDir, cacheFileName(DOCS_CACHE_KIND, realRoot));
}

function docsCacheSpec(realRoot: string, index: TextIndex): IndexCacheSpec<Omit<DocRecord, 'entry'>> {
  return {
    kind: DOCS_CACHE_KIND,
    version: DOCS_CACHE_VERSION,
    root: realRoot,
    fields: index.fields,
    of: `an index of ${realRoot}`,
    record: (row) => {
      if (!isRecord(row)) return undefined;
      const [path, digest, bodyStart, words, title, description] = row;
      return [path, { digest, bodyStart, words, title, description }];
    },
  };
}

/**
 * The cache of the folder `realRoot`, checked (util/index-cache.ts: a damaged or malformed cache is a problem to
 * warn of, and the folder is indexed afresh). Its term table is handed to `index`, which must be new.
 */
export function loadDocsCache(
  file: string,
  realRoot: string,
  index: TextIndex,
): { cache?: LoadedDocsCache; problem?: string } {
  const { cache, problem } = loadIndexCache(file, docsCacheSpec(realRoot, index));
  if (!cache) return problem === undefined ? {} : { problem };
  return { cache: { records: cache.records, mapping: index.terms(cache.terms) } };
}

/** Writes the library's documents and index entries (never throws; a failure is returned for a warning). */
export function saveDocsCache(
  file: string,
  realRoot: string,
  root: string,
  index: TextIndex,
  docs: ReadonlyMap<string, Doc>,
  origins: ReadonlyMap<string, DocOrigin>,
): { ok: boolean; message?: string } {
  const snapshot = index.snapshot();
  const rows: Array<{ row: RecordTuple; entry: Uint32Array }> = [];
  snapshot.keys.forEach((slug, i) => {
    const doc = docs.get(slug);
    const origin = origins.get(slug);
    if (!doc || !origin) return;
    rows.push({
      row: [
        relativePath(root, doc.file),
        origin.digest,
        origin.bodyStart,
        doc.words,
        doc.title,
        doc.description,
      ],
      entry: snapshotEntry(snapshot, i),
    });
  });
  return saveIndexCache(file, docsCacheSpec(realRoot, index), snapshot.terms, rows);
}

/** A file's path below the folder, `/`-separated: the key of its record. */
export function relativePath(root: string, file: string): string {
  return relative(root, file).split(sep).join('/');
}

function isRecord(value: unknown): value is RecordTuple {
  if (!Array.isArray(value) || value.length !== 6) return false;
  const [path, digest, bodyStart, words, title, description] = value as unknown[];
  return (
    typeof path === 'string' &&
    typeof digest === 'string' &&
    Number.isSafeInteger(bodyStart) &&
    (bodyStart as number) >= 0 &&
    Number.isSafeInteger(words) &&
    (words as number) >= 0 &&
    typeof title === 'string' &&
    typeof description === 'string'
  );
}
