import { EventEmitter } from 'node:events';
import { realpath, stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { type FSWatcher, watch } from 'chokidar';
import leven from 'leven';
import MiniSearch from 'minisearch';
import { TackError } from '../../errors.js';
import { isDocFile, isSkippedDir } from '../../util/doc-files.js';
import { type Doc, listDocFiles, readDoc, slugOf } from './corpus.js';

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

/**
 * A folder of Markdown documents, indexed for BM25 search (MiniSearch's BM25+, title and description boosted
 * over the body), optionally watched so edits re-index. Emits `change` with the slugs that moved.
 */
export class DocsLibrary extends EventEmitter<{ change: [LibraryChange]; error: [Error] }> {
  readonly root: string;
  readonly #realRoot: string;
  readonly #docs = new Map<string, Doc>();
  /** The files behind each slug: `x.md` and `x.mdx` are both `x`; `bySourceOrder` says which one is served. */
  readonly #files = new Map<string, Set<string>>();
  readonly #index = newIndex();
  /** `list()`, kept until a document comes, changes or goes. */
  #sorted: readonly Doc[] | undefined;
  #watcher: FSWatcher | undefined;
  #flushTimer: NodeJS.Timeout | undefined;

  private constructor(root: string, realRoot: string) {
    super();
    this.root = root;
    this.#realRoot = realRoot;
  }

  /** Reads and indexes every .md/.mdx file below `folder`. */
  static async open(folder: string): Promise<DocsLibrary> {
    const root = resolve(folder);
    const info = await stat(root).catch(() => undefined);
    if (!info?.isDirectory()) {
      throw new TackError('USAGE', `${root}: not a folder of documents`, {
        subject: { file: root },
        hint: 'Give the folder holding your .md / .mdx files.',
      });
    }
    const library = new DocsLibrary(root, await realpath(root));
    for (const file of await listDocFiles(root)) library.#sources(slugOf(root, file)).add(file);
    const docs = await Promise.all(
      [...library.#files.values()].map((files) => readDoc(root, served(files)[0]!, library.#realRoot)),
    );
    for (const doc of docs) library.#put(doc);
    return library;
  }

  get size(): number {
    return this.#docs.size;
  }

  get(slug: string): Doc | undefined {
    return this.#docs.get(slug);
  }

  /** Every document, by slug. */
  list(): readonly Doc[] {
    this.#sorted ??= [...this.#docs.values()].sort((a, b) => a.slug.localeCompare(b.slug));
    return this.#sorted;
  }

  search(query: string, k = 3): SearchHit[] {
    return this.#index
      .search(query)
      .slice(0, Math.max(0, k))
      .map((hit) => ({
        slug: String(hit.id),
        title: String(hit.title),
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
      .sort((a, b) => a.distance - b.distance || a.candidate.localeCompare(b.candidate))
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
      void this.#refresh(files).then(
        (change) => {
          if (change.added.length + change.updated.length + change.removed.length > 0)
            this.emit('change', change);
        },
        (error: unknown) => this.emit('error', error instanceof Error ? error : new Error(String(error))),
      );
    };
    const queue = (file: string) => {
      if (!isDocFile(file)) return;
      pending.add(file);
      // Editors write a file in several steps; one re-index per burst.
      this.#flushTimer ??= setTimeout(flush, 100);
    };
    this.#watcher = watch(this.root, {
      ignoreInitial: true,
      // A link may lead out of the folder; readDoc refuses files that resolve outside it.
      followSymlinks: false,
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

  async close(): Promise<void> {
    clearTimeout(this.#flushTimer);
    await this.#watcher?.close();
    this.#watcher = undefined;
  }

  async #refresh(files: string[]): Promise<LibraryChange> {
    const change: LibraryChange = { added: [], updated: [], removed: [] };
    const fresh = new Map<string, Doc>();
    const slugs = new Set<string>();
    for (const file of files) {
      const slug = slugOf(this.root, file);
      slugs.add(slug);
      const doc = await this.#read(file);
      if (doc) {
        fresh.set(file, doc);
        this.#sources(slug).add(file);
      } else this.#sources(slug).delete(file);
    }
    for (const slug of slugs) {
      const shown = this.#docs.get(slug);
      const sources = this.#sources(slug);
      let doc: Doc | undefined;
      // The first file that still reads, in the fixed order: when `x.md` goes, `x.mdx` is read and shown.
      for (const file of served(sources)) {
        doc = fresh.get(file) ?? (shown?.file === file ? shown : await this.#read(file));
        if (doc) break;
        sources.delete(file);
      }
      if (!doc) {
        this.#files.delete(slug);
        if (shown) {
          this.#remove(slug);
          change.removed.push(slug);
        }
        continue;
      }
      if (doc === shown) continue; // a file this slug does not show changed
      this.#put(doc);
      (shown ? change.updated : change.added).push(slug);
    }
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

  #read(file: string): Promise<Doc | undefined> {
    return readDoc(this.root, file, this.#realRoot).catch(() => undefined);
  }

  #put(doc: Doc): void {
    if (this.#docs.has(doc.slug)) this.#remove(doc.slug);
    this.#sorted = undefined;
    this.#docs.set(doc.slug, doc);
    this.#index.add({ id: doc.slug, title: doc.title, description: doc.description, text: doc.text });
  }

  #remove(slug: string): void {
    this.#sorted = undefined;
    this.#index.discard(slug);
    this.#docs.delete(slug);
  }
}

/** The files of one slug, the one served first: `.md` before `.mdx`, then by name, so the choice is stable. */
function served(files: Iterable<string>): string[] {
  const rank = (file: string) => (file.toLowerCase().endsWith('.mdx') ? 1 : 0);
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

function newIndex() {
  return new MiniSearch<{ id: string; title: string; description: string; text: string }>({
    fields: ['title', 'description', 'text'],
    storeFields: ['title'],
    searchOptions: { boost: { title: 3, description: 2 }, combineWith: 'OR' },
  });
}
