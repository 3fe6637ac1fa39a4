import { EventEmitter } from 'node:events';
import { realpath, stat } from 'node:fs/promises';
import { relative, resolve, sep } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import leven from 'leven';
import { errorMessage, TackError } from '../../errors.js';
import { isDocFile } from '../../util/doc-files.js';
import { TextIndex } from '../../util/text-index.js';
import { compareText } from '../../util/text-order.js';
import { isSkippedDir } from '../../util/walk-tree.js';
import { type Doc, normalizedSource, type ParsedDoc, parseDoc, readDocSource, slugOf } from './corpus.js';
import {
  type DocOrigin,
  docsCacheFile,
  type LoadedDocsCache,
  loadDocsCache,
  relativePath,
  saveDocsCache,
} from './index-cache.js';
import { type DocsLimits, docsLimits, formatBytes, skipWarning, Warnings } from './limits.js';
import { listDocFiles } from './walk.js';

export interface SearchHit {
  slug: string;
  title: string;
  score: number;
}

export interface LibraryChange {
  added: string[];
  updated: string[];
  removed: string[];
}

export interface DocsLibraryOptions {
  /** Caps on what is read and indexed, as under `limits` in tack.json; each defaults to DEFAULT_LIMITS's. */
  limits?: Partial<DocsLimits> | undefined;
  /**
   * A folder to keep the index in between runs (`<state>/indexes`: `config.paths.stateDir`); a warm start then
   * reads every file but parses and indexes only those that changed. Without it, everything is indexed afresh.
   */
  cacheDir?: string | undefined;
}

/** How the last open used the index cache: for logs, tests and benchmarks. */
export interface DocsCacheReport {
  file: string;
  /** Documents whose index entry came from the cache. */
  loaded: number;
  /** Documents parsed and indexed afresh (new, changed, or not in a usable cache). */
  indexed: number;
  /** Whether the cache file was written after opening (something differed from it). */
  saved: boolean;
  /** Why an existing cache file was not used, when it was not. */
  problem?: string;
}

/**
 * A folder of Markdown documents, indexed for BM25 search (MiniSearch's BM25+, title and description boosted
 * over the body, on util/text-index.ts), optionally watched so edits re-index. Emits `change` with the slugs that
 * moved, and `warning` when a re-index leaves a document out (over a cap in `limits`). With `cacheDir`, the index
 * is kept between runs (index-cache.ts): written after opening when anything changed, and on close.
 *
 * Within the caps (DocsLimits): no document over `docsFileBytes`, no folder deeper than `docsDepth`, at most
 * `docsFiles` documents of at most `docsTotalBytes` in all, at open and on every change alike.
 */
export class DocsLibrary extends EventEmitter<{
  change: [LibraryChange];
  error: [Error];
  warning: [string];
}> {
  readonly root: string;
  readonly #realRoot: string;
  readonly #limits: DocsLimits;
  readonly #docs = new Map<string, Doc>();
  /** Sum of `bytes` over the documents shown, held under `docsTotalBytes`. */
  #totalBytes = 0;
  #warnings: readonly string[] = [];
  /** Files already reported as over `docsFileBytes`: a file that keeps growing is reported once. */
  readonly #oversize = new Set<string>();
  /** The files behind each slug: `x.md` and `x.mdx` are both `x`; `bySourceOrder` says which one is served. */
  readonly #files = new Map<string, Set<string>>();
  readonly #index = new TextIndex({
    fields: ['title', 'description', 'text'],
    boost: { title: 3, description: 2 },
  });
  /** Digest and body offset of each shown document's file: what the cache keys it by. */
  readonly #origins = new Map<string, DocOrigin>();
  readonly #cacheFile: string | undefined;
  #cacheReport: DocsCacheReport | undefined;
  /** Documents changed since the cache was last written. */
  #dirty = false;
  /** `list()`, kept until a document comes, changes or goes. */
  #sorted: readonly Doc[] | undefined;
  #watcher: FSWatcher | undefined;
  #flushTimer: NodeJS.Timeout | undefined;
  /** The re-index running, if any; the next one waits for it. */
  #refreshing: Promise<unknown> = Promise.resolve();

  private constructor(root: string, realRoot: string, limits: DocsLimits, cacheDir: string | undefined) {
    super();
    this.root = root;
    this.#realRoot = realRoot;
    this.#limits = limits;
    this.#cacheFile = cacheDir === undefined ? undefined : docsCacheFile(cacheDir, realRoot);
  }

  /**
   * Reads and indexes every .md/.mdx file below `folder`, within the caps. What a cap leaves out is listed in
   * `warnings` (by name, with the cap and the `limits` key that raises it); the rest is served.
   */
  static async open(folder: string, options: DocsLibraryOptions = {}): Promise<DocsLibrary> {
    const root = resolve(folder);
    const info = await stat(root).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new TackError('USAGE', `${root}: not a folder of documents`, {
        subject: { file: root },
        hint: 'Give the folder holding your .md / .mdx files.',
      });
    }
    const limits = docsLimits(options.limits);
    const library = new DocsLibrary(root, await realpath(root), limits, options.cacheDir);
    const listing = await listDocFiles(root, limits);
    const sizes = new Map(listing.files.map((file) => [file.path, file.bytes]));
    for (const { path } of listing.files) library.#sources(slugOf(root, path)).add(path);
    // The files to read, in the walk's order, while their listed sizes fit the total: what is read fits too.
    const chosen: string[] = [];
    let planned = 0;
    let overTotal: string | undefined;
    for (const files of library.#files.values()) {
      const file = served(files)[0]!;
      const bytes = sizes.get(file) ?? 0;
      if (planned + bytes > limits.docsTotalBytes) {
        overTotal = file;
        break;
      }
      planned += bytes;
      chosen.push(file);
    }
    const warnings = new Warnings();
    const cacheFile = library.#cacheFile;
    const loaded = cacheFile ? loadDocsCache(cacheFile, library.#realRoot, library.#index) : {};
    if (loaded.problem)
      warnings.add(`the index cache was not used, so the folder was indexed afresh: ${loaded.problem}`);
    let fromCache = 0;
    for (const file of chosen) {
      let source: ReturnType<typeof readDocSource>;
      try {
        source = readDocSource(root, file, { realRoot: library.#realRoot, maxBytes: limits.docsFileBytes });
      } catch (error) {
        warnings.add(
          TackError.isInstance(error) ? skipWarning(error) : `skipped ${file}: ${errorMessage(error)}`,
        );
        continue;
      }
      // A file that grew between the listing and the read.
      if (library.#totalBytes + source.bytes > limits.docsTotalBytes) {
        overTotal = file;
        break;
      }
      if (library.#showCached(file, source, loaded.cache)) fromCache++;
      else {
        const parsed = parseDoc(slugOf(root, file), file, source.text);
        library.#put(parsed, origin(source, parsed.markdown));
      }
    }
    // Slugs not shown (left out by a cap, or unreadable) are forgotten: an edit brings them back, caps allowing.
    for (const slug of [...library.#files.keys()]) if (!library.#docs.has(slug)) library.#files.delete(slug);
    const totalWarning = overTotal
      ? [
          `stopped indexing ${root} at ${library.size} documents (${formatBytes(library.#totalBytes)}): the next, ` +
            `${overTotal}, would take them past ${formatBytes(limits.docsTotalBytes)} in all, the cap; the rest ` +
            'are not served: raise limits.docsTotalBytes in tack.json to index more',
        ]
      : [];
    if (cacheFile) {
      // Written when anything differs from the cache: a document indexed afresh, or one the cache has and the
      // folder no longer shows.
      const stale = fromCache !== library.size || (loaded.cache?.records.size ?? -1) !== fromCache;
      library.#dirty = stale;
      const saved = stale ? library.#saveCache(warnings) : false;
      library.#cacheReport = {
        file: cacheFile,
        loaded: fromCache,
        indexed: library.size - fromCache,
        saved,
        ...(loaded.problem ? { problem: loaded.problem } : {}),
      };
    }
    library.#warnings = [...listing.warnings, ...warnings.list(), ...totalWarning];
    return library;
  }

  /** How the last open used the index cache; undefined without `cacheDir`. */
  get cache(): DocsCacheReport | undefined {
    return this.#cacheReport;
  }

  get size(): number {
    return this.#docs.size;
  }

  /** What the caps left out when the folder was opened (watching reports later ones as `warning` events). */
  get warnings(): readonly string[] {
    return this.#warnings;
  }

  get(slug: string): Doc | undefined {
    return this.#docs.get(slug);
  }

  /** Every document, by slug. */
  list(): readonly Doc[] {
    this.#sorted ??= [...this.#docs.values()].sort((a, b) => compareText(a.slug, b.slug));
    return this.#sorted;
  }

  /** The `k` best documents for a query: BM25+ as MiniSearch ranks (util/text-index.ts), title and description boosted. */
  search(query: string, k = 3): SearchHit[] {
    return this.#index.search(query, k).map((hit) => ({
      slug: hit.key,
      title: this.#docs.get(hit.key)?.title ?? hit.key,
      score: Math.round(hit.score * 100) / 100,
    }));
  }

  /** Up to three slugs a mistyped one probably meant: same last segment, shared prefix, then edit distance. */
  nearest(slug: string, count = 3): string[] {
    const wanted = slug.toLowerCase();
    const tail = wanted.split('/').at(-1) ?? wanted;
    return [...this.#docs.keys()]
      .map((candidate) => {
        const lower = candidate.toLowerCase();
        const bonus = lower.endsWith(`/${tail}`) || lower === tail ? -10 : lower.includes(tail) ? -5 : 0;
        return { candidate, distance: leven(wanted, lower) + bonus };
      })
      .sort((a, b) => a.distance - b.distance || compareText(a.candidate, b.candidate))
      .slice(0, count)
      .map(({ candidate }) => candidate);
  }

  /** Watch the folder: added, changed and deleted documents are re-indexed, then `change` is emitted. */
  async watch(): Promise<void> {
    if (this.#watcher) return;
    const pending = new Set<string>();
    const flush = () => {
      this.#flushTimer = undefined;
      const files = [...pending];
      pending.clear();
      // One re-index at a time: two at once could both find room under docsFiles or docsTotalBytes.
      const run = this.#refreshing.then(() => this.#refresh(files));
      this.#refreshing = run.catch(() => undefined);
      void run.then(
        (change) => {
          if (change.added.length + change.updated.length + change.removed.length > 0)
            this.emit('change', change);
        },
        (error: unknown) => this.emit('error', error instanceof Error ? error : new Error(String(error))),
      );
    };
    const queue = (file: string) => {
      if (!isDocFile(file)) return;
      // chokidar's `depth` keeps deeper folders unwatched; checked here too, so the cap holds whatever it reports.
      if (relative(this.root, file).split(sep).length - 1 > this.#limits.docsDepth) return;
      pending.add(file);
      // Editors write a file in several steps; one re-index per burst.
      this.#flushTimer ??= setTimeout(flush, 100);
    };
    this.#watcher = watch(this.root, {
      ignoreInitial: true,
      // A link may lead out of the folder (readDoc refuses files that resolve outside it) or back into it.
      followSymlinks: false,
      // The root is level 0 and its folders level 1, as in listDocFiles.
      depth: this.#limits.docsDepth,
      ignored: (path, stats) =>
        path !== this.root &&
        (stats?.isDirectory() ?? false) &&
        isSkippedDir(path.split(/[\\/]/).at(-1) ?? ''),
    })
      .on('add', queue)
      .on('change', queue)
      .on('unlink', queue)
      .on('error', (error) => this.emit('error', error instanceof Error ? error : new Error(String(error))));
    await new Promise<void>((ready) => this.#watcher?.once('ready', () => ready()));
  }

  /** Stops watching; the index cache is written when documents changed since it last was. */
  async close(): Promise<void> {
    clearTimeout(this.#flushTimer);
    await this.#watcher?.close();
    this.#watcher = undefined;
    await this.#refreshing;
    if (this.#dirty) {
      const warnings = new Warnings();
      this.#saveCache(warnings);
      for (const message of warnings.list()) this.emit('warning', message);
    }
  }

  /** Writes the index cache; a failure is a warning (the next start indexes afresh). */
  #saveCache(warnings: Warnings): boolean {
    if (!this.#cacheFile) return false;
    const result = saveDocsCache(
      this.#cacheFile,
      this.#realRoot,
      this.root,
      this.#index,
      this.#docs,
      this.#origins,
    );
    if (!result.ok) {
      warnings.add(`the index cache was not written: ${result.message}`);
      return false;
    }
    this.#dirty = false;
    return true;
  }

  /**
   * Shows the document of `file` from the cache when the cache has it with this very content: its record gives
   * what parsing would (title, description, words, where the body starts) and its entry what indexing would.
   */
  #showCached(
    file: string,
    source: { text: string; bytes: number; digest: string },
    cache: LoadedDocsCache | undefined,
  ): boolean {
    const record = cache?.records.get(relativePath(this.root, file));
    if (!cache || !record || record.digest !== source.digest) return false;
    const normalized = normalizedSource(source.text);
    if (record.bodyStart > normalized.length) return false;
    const slug = slugOf(this.root, file);
    if (!this.#index.addEntry(slug, record.entry, cache.mapping)) return false;
    this.#show(
      {
        slug,
        title: record.title,
        description: record.description,
        markdown: normalized.slice(record.bodyStart),
        file,
        bytes: source.bytes,
        words: record.words,
      },
      { digest: source.digest, bodyStart: record.bodyStart },
    );
    return true;
  }

  async #refresh(files: string[]): Promise<LibraryChange> {
    const change: LibraryChange = { added: [], updated: [], removed: [] };
    const warnings = new Warnings();
    const bySlug = new Map<string, Set<string>>();
    for (const file of files) {
      const slug = slugOf(this.root, file);
      const changed = bySlug.get(slug) ?? new Set<string>();
      changed.add(file);
      bySlug.set(slug, changed);
    }
    // Slug by slug, each document indexed (or dropped) before the next is read: a burst of edits holds one
    // document in memory at a time besides the library.
    for (const [slug, changed] of bySlug) {
      const shown = this.#docs.get(slug);
      const sources = this.#sources(slug);
      for (const file of changed) sources.add(file); // one that is gone drops out below, when it does not read
      let doc: Doc | undefined;
      let fresh: { doc: ParsedDoc; origin: DocOrigin } | undefined;
      let refused: string | undefined;
      // The first file that still reads, in the fixed order: when `x.md` goes, `x.mdx` is read and shown.
      for (const file of served(sources)) {
        if (file === shown?.file && !changed.has(file)) {
          doc = shown;
          break;
        }
        if (!shown && this.#docs.size >= this.#limits.docsFiles) {
          refused =
            `did not index ${file}: the folder has ${this.#limits.docsFiles.toLocaleString('en-US')} documents ` +
            'indexed, the cap; raise limits.docsFiles in tack.json to index more';
          break;
        }
        fresh = await this.#read(file, warnings);
        doc = fresh?.doc;
        if (doc) break;
        sources.delete(file);
      }
      if (
        doc &&
        doc !== shown &&
        this.#totalBytes - (shown?.bytes ?? 0) + doc.bytes > this.#limits.docsTotalBytes
      ) {
        refused =
          `did not index ${doc.file}: it would take the documents past ${formatBytes(this.#limits.docsTotalBytes)} ` +
          'in all, the cap; raise limits.docsTotalBytes in tack.json to index more';
        doc = undefined;
      }
      if (refused) warnings.add(refused);
      if (!doc) {
        // Left out by a cap, the slug is forgotten like a deleted one: its next edit brings it back, caps allowing.
        if (refused || sources.size === 0) this.#files.delete(slug);
        if (shown) {
          this.#remove(slug);
          change.removed.push(slug);
        }
        continue;
      }
      if (doc === shown || !fresh) continue; // a file this slug does not show changed
      this.#put(fresh.doc, fresh.origin);
      (shown ? change.updated : change.added).push(slug);
    }
    for (const message of warnings.list()) this.emit('warning', message);
    return change;
  }

  #sources(slug: string): Set<string> {
    let files = this.#files.get(slug);
    if (!files) {
      files = new Set();
      this.#files.set(slug, files);
    }
    return files;
  }

  /**
   * The document in `file`, or undefined when it cannot be served: gone (a delete), outside the folder, or over
   * `docsFileBytes`, the last reported in `warnings` once per file until it reads again.
   */
  async #read(file: string, warnings: Warnings): Promise<{ doc: ParsedDoc; origin: DocOrigin } | undefined> {
    try {
      const source = readDocSource(this.root, file, {
        realRoot: this.#realRoot,
        maxBytes: this.#limits.docsFileBytes,
      });
      this.#oversize.delete(file);
      const doc = parseDoc(slugOf(this.root, file), file, source.text);
      return { doc, origin: origin(source, doc.markdown) };
    } catch (error) {
      if (TackError.isInstance(error) && error.code === 'LIMIT_EXCEEDED') {
        if (!this.#oversize.has(file)) warnings.add(skipWarning(error));
        this.#oversize.add(file);
      } else this.#oversize.delete(file);
      return undefined;
    }
  }

  /** Shows and indexes a document read and parsed afresh. */
  #put(parsed: ParsedDoc, from: DocOrigin): void {
    const { text, ...doc } = parsed;
    this.#index.add(doc.slug, [doc.title, doc.description, text]);
    this.#show(doc, from);
    this.#dirty = true;
  }

  /** Shows a document already indexed (the index entry is added by the caller). */
  #show(doc: Doc, from: DocOrigin): void {
    const shown = this.#docs.get(doc.slug);
    if (shown) this.#totalBytes -= shown.bytes;
    this.#sorted = undefined;
    this.#docs.set(doc.slug, doc);
    this.#origins.set(doc.slug, from);
    this.#totalBytes += doc.bytes;
  }

  #remove(slug: string): void {
    const doc = this.#docs.get(slug);
    if (!doc) return;
    this.#sorted = undefined;
    this.#index.remove(slug);
    this.#docs.delete(slug);
    this.#origins.delete(slug);
    this.#totalBytes -= doc.bytes;
    this.#dirty = true;
  }
}

/** What the cache keys a document by: its file's digest, and where its body starts in the normalized text. */
function origin(source: { text: string; digest: string }, markdown: string): DocOrigin {
  return { digest: source.digest, bodyStart: normalizedSource(source.text).length - markdown.length };
}

/** The files of one slug, the one served first: `.md` before `.mdx`, then by name, so the choice is stable. */
function served(files: Iterable<string>): string[] {
  const rank = (file: string) => (file.toLowerCase().endsWith('.mdx') ? 1 : 0);
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}
