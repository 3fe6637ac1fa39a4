import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { TackError } from '../errors.js';
import { pushAll } from '../util/arrays.js';
import { type FrontMatter, readFrontMatter } from '../util/front-matter.js';
import type { TextIndex } from '../util/text-index.js';
import { walkTree } from '../util/walk-tree.js';
import { sendWarning, type WarningSink } from '../util/warnings.js';
import {
  bundleCacheFile,
  type ConceptRefs,
  type FreshRecord,
  frontMatterOf,
  type LoadedBundleCache,
  loadBundleCache,
  mappingFor,
  newSearchIndex,
  normalizedText,
  type Reference,
  saveBundleCache,
  searchTexts,
} from './bundle-cache.js';
import { type Concept, parseConcept } from './concept.js';
import { IssueSink, type KnowledgeIssue } from './issues.js';
import {
  candidatePaths,
  existsOutside,
  isUrl,
  looksLikePath,
  type PathLookup,
  resolveInBundle,
} from './link-targets.js';
import { scanBody } from './links.js';
import {
  INDEX_FILE,
  type IndexFile,
  isReserved,
  LOG_FILE,
  type LogFile,
  parseIndexFile,
  parseLogFile,
} from './reserved.js';

/** Why one concept points at another (or at a file): a body link, or one of the path-valued fields (§6.2). */
export type EdgeKind = 'link' | 'source' | 'resource' | 'computation' | 'executor' | 'attester';

export interface Edge {
  from: string;
  /** A concept id when `toConcept`, else a bundle-relative file or folder path. */
  to: string;
  toConcept: boolean;
  kind: EdgeKind;
  /** As written in the file. */
  target: string;
}

/** The bundle's name (default: its folder's), a cache folder, and where warnings go. */
export interface LoadBundleOptions {
  /** The bundle's name in `okf://<name>/...` and in output; default the folder name. */
  name?: string | undefined;
  /**
   * A folder to keep what loading computes between runs (`<state>/indexes`: `config.paths.stateDir`): the front
   * matter, links and search index entry of every concept file, by its SHA-256 (bundle-cache.ts). A warm load
   * reads the files and parses only those that changed; with a cache the search index is built while loading.
   */
  cacheDir?: string | undefined;
  /** Where a cache that could not be used or written is reported (INDEX_CACHE). */
  onWarning?: WarningSink | undefined;
}

/** How a load used the cache: for logs, tests and benchmarks. */
export interface BundleCacheReport {
  file: string;
  /** Concept files whose front matter, links and index entry came from the cache. */
  loaded: number;
  /** Concept files read afresh (new, changed, or without a usable record). */
  parsed: number;
  /** Whether the cache was written (something differed from it). */
  saved: boolean;
  /** Why an existing cache file was not used, when it was not. */
  problem?: string;
}

/** Folders that are never part of a bundle's content (a bundle's own `dist/` is content, unlike docs'). */
function skipBundleDir(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules';
}

/**
 * A loaded OKF bundle: its concepts by id, the reserved files, the link graph with backlinks, and every issue
 * found. Loading never throws for the bundle's content (a non-conformant file is an error issue and is left
 * out); it throws only when the folder cannot be read at all.
 */
export class KnowledgeBundle {
  /** Edges by source and by target concept, made on the first outlinks or backlinks: loading needs neither. */
  #out: Map<string, Edge[]> | undefined;
  #in: Map<string, Edge[]> | undefined;
  #index: TextIndex | undefined;
  /** How loading used the cache; undefined when it was loaded without one. */
  readonly cache: BundleCacheReport | undefined;

  constructor(
    readonly name: string,
    readonly root: string,
    readonly concepts: ReadonlyMap<string, Concept>,
    readonly indexes: ReadonlyMap<string, IndexFile>,
    readonly logs: ReadonlyMap<string, LogFile>,
    readonly edges: readonly Edge[],
    readonly issues: readonly KnowledgeIssue[],
    loaded: { index?: TextIndex; cache?: BundleCacheReport } = {},
  ) {
    this.#index = loaded.index;
    this.cache = loaded.cache;
  }

  /**
   * The concepts' search index (keys: concept ids), as the knowledge base searches it: from the load when it
   * used a cache, else built here on first use.
   */
  searchIndex(): TextIndex {
    if (this.#index) return this.#index;
    const index = newSearchIndex();
    for (const concept of this.concepts.values()) index.add(concept.id, searchTexts(concept));
    this.#index = index;
    return index;
  }

  /** A concept by its id (its path without `.md`). */
  get(id: string): Concept | undefined {
    return this.concepts.get(normalizeId(id));
  }

  /** Like get, but a missing id is an error that suggests near ids. */
  require(id: string): Concept {
    const concept = this.get(id);
    if (concept) return concept;
    const wanted = normalizeId(id).toLowerCase();
    const tail = wanted.split('/').pop() ?? wanted;
    const near = [...this.concepts.keys()].filter((k) => k.toLowerCase().includes(tail)).slice(0, 5);
    throw new TackError('UNKNOWN_CONCEPT', `bundle ${this.name} has no concept "${id}"`, {
      hint: near.length > 0 ? `Did you mean: ${near.join(', ')}?` : 'tack knowledge search finds concepts.',
    });
  }

  /** What a concept points at. */
  outlinks(id: string): readonly Edge[] {
    return this.#links().out.get(normalizeId(id)) ?? [];
  }

  /** The concepts that point at this one. */
  backlinks(id: string): readonly Edge[] {
    return this.#links().in.get(normalizeId(id)) ?? [];
  }

  #links(): { out: Map<string, Edge[]>; in: Map<string, Edge[]> } {
    if (!this.#out || !this.#in) {
      this.#out = new Map();
      this.#in = new Map();
      for (const edge of this.edges) {
        push(this.#out, edge.from, edge);
        if (edge.toConcept) push(this.#in, edge.to, edge);
      }
    }
    return { out: this.#out, in: this.#in };
  }

  get errors(): number {
    return this.issues.filter((i) => i.severity === 'error').length;
  }

  /** Conformant per §11: no error issues. */
  get conformant(): boolean {
    return this.errors === 0;
  }

  /** The root index.md's `okf_version`, when declared. */
  get okfVersion(): string | undefined {
    return this.indexes.get('')?.okfVersion;
  }
}

/** `/tables/orders.md`, `tables/orders`, `./tables/orders.md` all name the concept `tables/orders`. */
export function normalizeId(id: string): string {
  return id
    .trim()
    .replace(/^\.?\/+/, '')
    .replace(/\.md$/i, '');
}

/** Reads a bundle folder: every concept, the link graph, and an issue for each file that does not conform. */
export async function loadBundle(root: string, options: LoadBundleOptions = {}): Promise<KnowledgeBundle> {
  const dir = resolve(root);
  let files: string[];
  let lookup: PathLookup;
  try {
    const walked = await walkBundle(dir);
    files = walked.markdown;
    lookup = (path) =>
      walked.files.has(path) ? 'file' : path === '' || walked.folders.has(path) ? 'folder' : undefined;
  } catch (error) {
    throw new TackError(
      'KNOWLEDGE_BUNDLE',
      `cannot read knowledge bundle ${root}: ${(error as Error).message}`,
      {
        subject: { file: dir },
        hint: 'Pass the folder that holds the bundle (its index.md and concept .md files).',
        cause: error,
      },
    );
  }
  const bytes = readAll(dir, files);
  const cacheFile = options.cacheDir ? bundleCacheFile(options.cacheDir, dir) : undefined;
  const loaded = cacheFile ? loadBundleCache(cacheFile, dir) : {};
  if (loaded.problem)
    sendWarning(options.onWarning, {
      code: 'INDEX_CACHE',
      message: `knowledge bundle ${dir}: the cache was not used, so every file was read afresh: ${loaded.problem}`,
    });
  // With a cache, the search index is built while loading, so that it can be written with the rest.
  const index = cacheFile ? newSearchIndex() : undefined;
  const mapping = index && loaded.cache ? mappingFor(index, loaded.cache) : undefined;
  const fresh = new Map<string, FreshRecord>();
  const ids = new Map<string, string>();
  let fromCache = 0;
  let changed = false;
  const concepts = new Map<string, Concept>();
  const refs = new Map<string, ConceptRefs>();
  const indexes = new Map<string, IndexFile>();
  const logs = new Map<string, LogFile>();
  const issues: KnowledgeIssue[] = [];
  files.forEach((path, i) => {
    const text = bytes[i]!.toString('utf8');
    const file = path.split('/').pop()!;
    if (file === INDEX_FILE) {
      const { index, issues: found } = parseIndexFile(path, text);
      indexes.set(path.slice(0, -INDEX_FILE.length).replace(/\/$/, ''), index);
      pushAll(issues, found);
    } else if (file === LOG_FILE) {
      const { log, issues: found } = parseLogFile(path, text);
      logs.set(path, log);
      pushAll(issues, found);
    } else {
      const digest = cacheFile ? sha256(bytes[i]!) : '';
      const cached = cachedRecord(loaded.cache, path, digest, text);
      const fm = cached?.fm ?? readFrontMatter(text);
      const { concept, issues: found } = parseConcept(path, text, fm);
      pushAll(issues, found);
      let body = cached?.refs;
      if (concept) {
        body ??= referencesOf(concept);
        concepts.set(concept.id, concept);
        refs.set(concept.id, body);
        ids.set(path, concept.id);
        if (index && !(cached && mapping && index.addEntry(concept.id, cached.entry, mapping))) {
          index.add(concept.id, searchTexts(concept));
          changed = true;
        }
      }
      if (cacheFile) {
        const bodyStart = cached?.bodyStart ?? normalizedText(text).length - fm.body.length;
        fresh.set(path, { digest, fm, bodyStart, refs: body ?? { references: [], footnotes: [] } });
        if (cached) fromCache++;
        else changed = true;
      }
    }
  });
  const edges: Edge[] = [];
  for (const concept of concepts.values())
    pushAll(edges, conceptEdges(dir, concept, refs.get(concept.id)!, issues, lookup));
  for (const index of indexes.values()) checkIndexLinks(dir, index, issues, lookup);
  let cache: BundleCacheReport | undefined;
  if (cacheFile && index) {
    // Written when anything differs: a file read afresh, or a record of a file that is gone.
    const stale = changed || (loaded.cache?.records.size ?? -1) !== fromCache;
    let saved = false;
    if (stale) {
      const result = saveBundleCache(cacheFile, dir, fresh, index, ids);
      saved = result.ok;
      if (!result.ok)
        sendWarning(options.onWarning, {
          code: 'INDEX_CACHE',
          message: `knowledge bundle ${dir}: the cache was not written: ${result.message}`,
        });
    }
    cache = {
      file: cacheFile,
      loaded: fromCache,
      parsed: fresh.size - fromCache,
      saved,
      ...(loaded.problem ? { problem: loaded.problem } : {}),
    };
  }
  return new KnowledgeBundle(
    options.name ?? basename(dir),
    dir,
    concepts,
    indexes,
    logs,
    edges,
    issues.sort(byFileAndLine),
    { ...(index ? { index } : {}), ...(cache ? { cache } : {}) },
  );
}

/**
 * A concept file's record when the cache has it for exactly these bytes, with its front matter rebuilt (absent
 * when the record could not keep it: it is read again, and the rest of the record still counts).
 */
function cachedRecord(
  cache: LoadedBundleCache | undefined,
  path: string,
  digest: string,
  text: string,
): { fm: FrontMatter | undefined; bodyStart?: number; refs: ConceptRefs; entry: Uint32Array } | undefined {
  const record = cache?.records.get(path);
  if (!record || record.digest !== digest) return undefined;
  const fm = frontMatterOf(record, text);
  // A record whose front matter does not fit its text is wrong as a whole.
  if (!fm && record.fm) return undefined;
  return {
    fm,
    ...(record.fm ? { bodyStart: record.fm.bodyStart } : {}),
    refs: record.refs,
    entry: record.entry,
  };
}

/**
 * What a concept refers to, from the file alone: its body's links and its path-valued fields, each with the
 * bundle paths it may name, and its footnotes. Whether those paths exist is conceptEdges' business.
 */
function referencesOf(concept: Concept): ConceptRefs {
  const { links, footnotes } = scanBody(concept.body);
  const references: Reference[] = [];
  const refer = (target: string, kind: EdgeKind, line: number | undefined) => {
    if (isUrl(target) || target.startsWith('#')) return;
    references.push([kind, target, line ?? 0, ...candidatePaths(concept.path, target)]);
  };
  for (const link of links) refer(link.target, 'link', concept.bodyLine + link.line - 1);
  const line = (key: string) => concept.keyLines.get(key);
  if (concept.resource && looksLikePath(concept.resource) && /[/.]/.test(concept.resource))
    refer(concept.resource, 'resource', line('resource'));
  for (const source of concept.sources) {
    // A scope descriptor ("all queries in project X") is not a path; a bare word is an external name.
    if (looksLikePath(source.resource) && /[/.]/.test(source.resource))
      refer(source.resource, 'source', line('sources'));
  }
  const contract = concept.computation;
  if (contract?.file) refer(contract.file, 'computation', line('computation'));
  if (contract?.executor?.resource) refer(contract.executor.resource, 'executor', line('executor'));
  if (contract?.attester?.resource) refer(contract.attester.resource, 'attester', line('attester'));
  return { references, footnotes: footnotes.map((note) => [note.label, note.line]) };
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/**
 * Every file and folder of the bundle (bundle-relative), and its .md files sorted so output and ids are stable
 * across file systems. By the tree walk's rules (util/walk-tree.ts): symlinks are left out (a link could bring in
 * files from outside the bundle), folders more than DEFAULT_MAX_DEPTH deep are not read, a folder that cannot be
 * read fails the load.
 */
async function walkBundle(
  root: string,
): Promise<{ markdown: string[]; files: Set<string>; folders: Set<string> }> {
  const markdown: string[] = [];
  const files = new Set<string>();
  const folders = new Set<string>();
  const tree = walkTree(root, {
    skipDir: skipBundleDir,
    onUnreadable: (_path, error) => {
      throw error;
    },
  });
  for (const { rel, name, kind } of tree) {
    if (kind === 'dir') folders.add(rel);
    else if (kind === 'file') {
      files.add(rel);
      if (name.endsWith('.md')) markdown.push(rel);
    }
  }
  return { markdown: markdown.sort(), files, folders };
}

/**
 * Reads every file synchronously. Measured on 10,000 concepts (22.9 MB, warm page cache): 173 ms, against 1.1 s
 * for fs/promises with 64 reads in flight, whose per-file handle, fstat and close round trips dominate. A bundle
 * loads once, at start, so blocking the loop for that long is the cheaper choice.
 */
function readAll(root: string, files: readonly string[]): Buffer[] {
  return files.map((file) => readFileSync(join(root, file)));
}

/** A concept's edges and broken links: which of each reference's candidate paths exists in the bundle now. */
function conceptEdges(
  root: string,
  concept: Concept,
  refs: ConceptRefs,
  issues: KnowledgeIssue[],
  lookup: PathLookup,
): Edge[] {
  const sink = new IssueSink(concept.path);
  const edges: Edge[] = [];
  const broken = new Set<string>();
  for (const [kind, target, line, ...candidates] of refs.references) {
    let path: string | undefined;
    let found: 'file' | 'folder' | undefined;
    for (const candidate of candidates) {
      found = lookup(candidate);
      if (found) {
        path = candidate;
        break;
      }
    }
    if (path === undefined) {
      // A source kept outside the bundle (the docs a generated concept came from) is provenance, not a broken link.
      if (kind === 'source' && existsOutside(root, concept.path, target)) continue;
      // Once per target and kind: a file repeating one dead link a million times is one finding, not a million.
      const key = `${kind}\u0000${target}`;
      if (broken.has(key)) continue;
      broken.add(key);
      sink.warn(
        'broken-link',
        `${kind === 'link' ? 'link' : `\`${kind}\``} "${target}" is not in the bundle`,
        line || undefined,
      );
      continue;
    }
    const toConcept = found === 'file' && path.endsWith('.md') && !isReserved(basenameOf(path));
    edges.push({ from: concept.id, to: toConcept ? path.slice(0, -3) : path, toConcept, kind, target });
  }
  // Footnote labels join into sources[].id (§5.1); a label with no source is attribution that leads nowhere.
  const ids = new Set(concept.sources.map((s) => s.id).filter(Boolean));
  if (concept.sources.length > 0)
    for (const [label, at] of refs.footnotes) {
      if (ids.has(label)) continue;
      sink.warn('footnote-source', `footnote [^${label}] names no sources[].id`, concept.bodyLine + at - 1);
      ids.add(label);
    }
  pushAll(issues, sink.issues);
  return edges;
}

function checkIndexLinks(root: string, index: IndexFile, issues: KnowledgeIssue[], lookup: PathLookup): void {
  const sink = new IssueSink(index.path);
  for (const entry of index.entries) {
    if (isUrl(entry.target) || entry.target.startsWith('#')) continue;
    if (!resolveInBundle(root, index.path, entry.target, lookup))
      sink.warn('broken-link', `index entry "${entry.title}" points at "${entry.target}", not in the bundle`);
  }
  pushAll(issues, sink.issues);
}

function basenameOf(path: string): string {
  return path.split('/').pop() ?? path;
}

function push<K, V>(map: Map<K, V[]>, key: K, value: V): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

function byFileAndLine(a: KnowledgeIssue, b: KnowledgeIssue): number {
  return a.file < b.file ? -1 : a.file > b.file ? 1 : (a.line ?? 0) - (b.line ?? 0);
}
