import { join } from 'node:path';
import { cacheFileName } from '../util/cache-file.js';
import type { FrontMatter, FrontMatterProblem } from '../util/front-matter.js';
import { type IndexCacheSpec, loadIndexCache, saveIndexCache } from '../util/index-cache.js';
import { snapshotEntry, type TermMapping, TextIndex } from '../util/text-index.js';
import type { EdgeKind } from './bundle.js';
import type { Concept } from './concept.js';

/**
 * A knowledge bundle's loading work, kept in the state directory (`<state>/indexes/knowledge-<hash>.idx`) so a
 * warm start reads the files and their digests and skips what is costly: the front matter reader, the link
 * scanner and the search index's tokenizer. Each concept file is keyed by its path and the SHA-256 of its
 * bytes, and only what is a function of those bytes is kept:
 *
 * - the front matter as read (mapping, key lines, where the body starts, problems): parseConcept still runs on
 *   it, so the typed fields and the file's own issues are computed as ever, from the same input;
 * - the links and footnotes the body holds, as written, with their lines;
 * - the concept's search index entry (util/text-index.ts).
 *
 * What depends on other files is never cached: whether a link's target exists (broken-link warnings, the edges,
 * backlinks), whether a source outside the bundle exists, the index files' links. Those are worked out at every
 * load from the files found then, so a concept added, removed or renamed is seen by every link to it, and the
 * statistics of the search index are those of the concepts loaded. Bump VERSION whenever what is kept, or how
 * one of those functions computes it, changes.
 */
export const KNOWLEDGE_CACHE_KIND = 'knowledge';
export const KNOWLEDGE_CACHE_VERSION = 1;

/** The search fields of a concept, boosted as the knowledge base has always ranked them. */
export const SEARCH_FIELDS = ['title', 'description', 'tags', 'body'] as const;
export const SEARCH_BOOST = { title: 3, description: 2, tags: 2 } as const;

export function newSearchIndex(): TextIndex {
  return new TextIndex({ fields: SEARCH_FIELDS, boost: SEARCH_BOOST });
}

/** What the search index reads of a concept: its title with its id's words, description, tags and body. */
export function searchTexts(concept: Concept): string[] {
  return [
    `${concept.title} ${concept.id.replace(/[/_-]+/g, ' ')}`,
    concept.description ?? '',
    concept.tags.join(' '),
    concept.body,
  ];
}

/**
 * A link or path-valued field of a concept that may point into the bundle: why (an edge kind), the target as
 * written, its line in the file (0: none), and the bundle paths it may name, in the order they are tried
 * (link-targets.ts candidatePaths). All of it follows from the file alone; which candidate exists is asked at each load.
 */
export type Reference = [kind: EdgeKind, target: string, line: number, ...candidates: string[]];

/** What a concept refers to: its references, and the footnote labels of its body with their lines. */
export interface ConceptRefs {
  references: Reference[];
  footnotes: Array<[label: string, line: number]>;
}

/** readFrontMatter's result without the body, which is the normalized text from `bodyStart` on. */
interface CachedFrontMatter {
  present: boolean;
  data: Record<string, unknown>;
  bodyStart: number;
  bodyLine: number;
  keyLines: Array<[string, number]>;
  problems: FrontMatterProblem[];
}

/** One concept file's record as kept; `fm` is null when its front matter holds values JSON cannot keep. */
export interface ConceptRecord {
  digest: string;
  fm: CachedFrontMatter | null;
  refs: ConceptRefs;
  /** Its search index entry, empty when the file is no concept (an error) or it was not indexed. */
  entry: Uint32Array;
}

export interface LoadedBundleCache {
  /** By bundle-relative path. */
  records: Map<string, ConceptRecord>;
  terms: readonly string[];
}

/** A record to write: the file's digest, its front matter and where its body starts, its references. */
export interface FreshRecord {
  digest: string;
  fm: FrontMatter;
  /** Where `fm.body` starts in the normalized text (normalizedText). */
  bodyStart: number;
  refs: ConceptRefs;
}

export function bundleCacheFile(cacheDir: string, root: string): string {
  return join(cacheDir, cacheFileName(KNOWLEDGE_CACHE_KIND, root));
}

/** The text as the front matter reader sees it: a concept's `body` is a suffix of it. */
export function normalizedText(text: string): string {
  return text.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

function bundleCacheSpec(root: string): IndexCacheSpec<Omit<ConceptRecord, 'entry'>> {
  return {
    kind: KNOWLEDGE_CACHE_KIND,
    version: KNOWLEDGE_CACHE_VERSION,
    root,
    fields: SEARCH_FIELDS,
    of: `a cache of the bundle ${root}`,
    record: (row) => {
      if (!Array.isArray(row) || row.length !== 4) return undefined;
      const [path, digest, fm, refs] = row as unknown[];
      if (typeof path !== 'string' || typeof digest !== 'string' || !isRefs(refs)) return undefined;
      if (fm !== null && !isFrontMatter(fm)) return undefined;
      return [path, { digest, fm, refs }];
    },
  };
}

/**
 * The cache of the bundle at `root`, checked; `problem` says why an existing file was not used (util/index-cache.ts:
 * a damaged or malformed cache is not used at all, and every file is read afresh).
 */
export function loadBundleCache(file: string, root: string): { cache?: LoadedBundleCache; problem?: string } {
  return loadIndexCache(file, bundleCacheSpec(root));
}

/** The front matter a record keeps, as readFrontMatter gave it; undefined when `text` cannot have it. */
export function frontMatterOf(record: ConceptRecord, text: string): FrontMatter | undefined {
  return record.fm ? frontMatterAt(record.fm, text) : undefined;
}

function frontMatterAt(fm: CachedFrontMatter, text: string): FrontMatter | undefined {
  const normalized = normalizedText(text);
  if (fm.bodyStart > normalized.length) return undefined;
  return {
    present: fm.present,
    data: fm.data,
    body: normalized.slice(fm.bodyStart),
    bodyLine: fm.bodyLine,
    keyLines: new Map(fm.keyLines),
    problems: fm.problems,
  };
}

/**
 * Writes the bundle's records and its concepts' index entries (never throws; a failure is returned for a
 * warning). `ids` maps a concept file's path to its id in `index`.
 */
export function saveBundleCache(
  file: string,
  root: string,
  records: ReadonlyMap<string, FreshRecord>,
  index: TextIndex,
  ids: ReadonlyMap<string, string>,
): { ok: boolean; message?: string } {
  const snapshot = index.snapshot();
  const at = new Map(snapshot.keys.map((key, i) => [key, i]));
  const rows: Array<{ row: unknown[]; entry: Uint32Array }> = [];
  for (const [path, record] of records) {
    const id = ids.get(path);
    const i = id === undefined ? undefined : at.get(id);
    const fm = record.fm;
    rows.push({
      row: [
        path,
        record.digest,
        jsonSafe(fm.data)
          ? {
              present: fm.present,
              data: fm.data,
              bodyStart: record.bodyStart,
              bodyLine: fm.bodyLine,
              keyLines: [...fm.keyLines],
              problems: fm.problems,
            }
          : null,
        record.refs,
      ],
      entry: i === undefined ? new Uint32Array(0) : snapshotEntry(snapshot, i),
    });
  }
  return saveIndexCache(file, bundleCacheSpec(root), snapshot.terms, rows);
}

/** A mapping of the cache's term table for `index` (which must be new to take the table's numbering as is). */
export function mappingFor(index: TextIndex, cache: LoadedBundleCache): TermMapping {
  return index.terms(cache.terms);
}

/**
 * Whether JSON keeps `value` exactly: a tree of plain objects and arrays of strings, booleans, null and finite
 * numbers (not -0). YAML can also give `.inf`, `.nan`, `-0`, a Date (an explicit `!!timestamp`), and through
 * anchors and aliases a value reached twice or a cycle, which JSON would copy (exponentially) or refuse; such a
 * file's front matter is read again at every load rather than kept changed. Each object is visited once.
 */
function jsonSafe(value: unknown): boolean {
  const stack: unknown[] = [value];
  const seen = new Set<object>();
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'object' && item !== null) {
      if (seen.has(item)) return false;
      seen.add(item);
    }
    if (item === null || typeof item === 'string' || typeof item === 'boolean') continue;
    if (typeof item === 'number') {
      if (!Number.isFinite(item) || Object.is(item, -0)) return false;
      continue;
    }
    if (Array.isArray(item)) {
      for (const element of item) stack.push(element);
      continue;
    }
    if (typeof item !== 'object') return false;
    const proto = Object.getPrototypeOf(item);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const key of Object.keys(item)) stack.push((item as Record<string, unknown>)[key]);
  }
  return true;
}

const PROBLEM_KINDS = new Set(['unclosed', 'yaml', 'not-mapping', 'unreadable', 'oversized']);

function isFrontMatter(value: unknown): value is CachedFrontMatter {
  const fm = value as Partial<CachedFrontMatter>;
  return (
    typeof fm === 'object' &&
    fm !== null &&
    typeof fm.present === 'boolean' &&
    typeof fm.data === 'object' &&
    fm.data !== null &&
    !Array.isArray(fm.data) &&
    isCount(fm.bodyStart) &&
    isCount(fm.bodyLine) &&
    Array.isArray(fm.keyLines) &&
    fm.keyLines.every(
      (e) => Array.isArray(e) && e.length === 2 && typeof e[0] === 'string' && isCount(e[1]),
    ) &&
    Array.isArray(fm.problems) &&
    fm.problems.every(
      (p) =>
        typeof p === 'object' &&
        p !== null &&
        isCount(p.line) &&
        typeof p.message === 'string' &&
        PROBLEM_KINDS.has(p.kind),
    )
  );
}

const EDGE_KINDS = new Set<unknown>(['link', 'source', 'resource', 'computation', 'executor', 'attester']);

function isRefs(value: unknown): value is ConceptRefs {
  const refs = value as Partial<ConceptRefs>;
  return (
    typeof refs === 'object' &&
    refs !== null &&
    Array.isArray(refs.references) &&
    refs.references.every(
      (r) =>
        Array.isArray(r) &&
        r.length >= 3 &&
        EDGE_KINDS.has(r[0]) &&
        isCount(r[2]) &&
        r.every((part, i) => i === 2 || typeof part === 'string'),
    ) &&
    Array.isArray(refs.footnotes) &&
    refs.footnotes.every(isPair)
  );
}

function isPair(value: unknown): boolean {
  return Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && isCount(value[1]);
}

function isCount(n: unknown): n is number {
  return typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
}
