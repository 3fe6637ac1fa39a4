import { readFileSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { TackError } from '../errors.js';
import { pushAll } from '../util/arrays.js';
import { type Concept, parseConcept } from './concept.js';
import { IssueSink, type KnowledgeIssue } from './issues.js';
import { existsOutside, isUrl, looksLikePath, type PathLookup, resolveInBundle } from './link-targets.js';
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

export interface LoadBundleOptions {
  /** The bundle's name in `okf://<name>/...` and in output; default the folder name. */
  name?: string;
}

/** Folders that are never part of a bundle's content. */
const SKIP_DIR = /^(\.|node_modules$)/;

/**
 * A loaded OKF bundle: its concepts by id, the reserved files, the link graph with backlinks, and every issue
 * found. Loading never throws for the bundle's content (a non-conformant file is an error issue and is left
 * out); it throws only when the folder cannot be read at all.
 */
export class KnowledgeBundle {
  readonly #out = new Map<string, Edge[]>();
  readonly #in = new Map<string, Edge[]>();

  constructor(
    readonly name: string,
    readonly root: string,
    readonly concepts: ReadonlyMap<string, Concept>,
    readonly indexes: ReadonlyMap<string, IndexFile>,
    readonly logs: ReadonlyMap<string, LogFile>,
    readonly edges: readonly Edge[],
    readonly issues: readonly KnowledgeIssue[],
  ) {
    for (const edge of edges) {
      push(this.#out, edge.from, edge);
      if (edge.toConcept) push(this.#in, edge.to, edge);
    }
  }

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
    return this.#out.get(normalizeId(id)) ?? [];
  }

  /** The concepts that point at this one. */
  backlinks(id: string): readonly Edge[] {
    return this.#in.get(normalizeId(id)) ?? [];
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
  const texts = readAll(dir, files);
  const concepts = new Map<string, Concept>();
  const indexes = new Map<string, IndexFile>();
  const logs = new Map<string, LogFile>();
  const issues: KnowledgeIssue[] = [];
  files.forEach((path, i) => {
    const text = texts[i]!;
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
      const { concept, issues: found } = parseConcept(path, text);
      if (concept) concepts.set(concept.id, concept);
      pushAll(issues, found);
    }
  });
  const edges: Edge[] = [];
  for (const concept of concepts.values()) pushAll(edges, conceptEdges(dir, concept, issues, lookup));
  for (const index of indexes.values()) checkIndexLinks(dir, index, issues, lookup);
  return new KnowledgeBundle(
    options.name ?? basename(dir),
    dir,
    concepts,
    indexes,
    logs,
    edges,
    issues.sort(byFileAndLine),
  );
}

/**
 * Every file and folder of the bundle (bundle-relative), and its .md files sorted so output and ids are stable
 * across file systems. Symlinks are left out: a link could bring in files from outside the bundle.
 */
async function walkBundle(
  root: string,
): Promise<{ markdown: string[]; files: Set<string>; folders: Set<string> }> {
  const markdown: string[] = [];
  const files = new Set<string>();
  const folders = new Set<string>();
  const walk = async (rel: string): Promise<void> => {
    const entries = await readdir(join(root, rel), { withFileTypes: true });
    const below: string[] = [];
    for (const entry of entries) {
      const path = rel ? `${rel}/${entry.name}` : entry.name;
      if (entry.isDirectory() && !SKIP_DIR.test(entry.name)) {
        folders.add(path);
        below.push(path);
      } else if (entry.isFile()) {
        files.add(path);
        if (entry.name.endsWith('.md')) markdown.push(path);
      }
    }
    await Promise.all(below.map(walk));
  };
  await walk('');
  return { markdown: markdown.sort(), files, folders };
}

/**
 * Reads every file synchronously. Measured on 10,000 concepts (22.9 MB, warm page cache): 173 ms, against 1.1 s
 * for fs/promises with 64 reads in flight, whose per-file handle, fstat and close round trips dominate. A bundle
 * loads once, at start, so blocking the loop for that long is the cheaper choice.
 */
function readAll(root: string, files: readonly string[]): string[] {
  return files.map((file) => readFileSync(join(root, file), 'utf8'));
}

function conceptEdges(root: string, concept: Concept, issues: KnowledgeIssue[], lookup: PathLookup): Edge[] {
  const sink = new IssueSink(concept.path);
  const edges: Edge[] = [];
  const broken = new Set<string>();
  const follow = (target: string, kind: EdgeKind, line: number | undefined) => {
    if (isUrl(target) || target.startsWith('#')) return;
    const found = resolveInBundle(root, concept.path, target, lookup);
    if (!found) {
      // A source kept outside the bundle (the docs a generated concept came from) is provenance, not a broken link.
      if (kind === 'source' && existsOutside(root, concept.path, target)) return;
      // Once per target and kind: a file repeating one dead link a million times is one finding, not a million.
      const key = `${kind}\u0000${target}`;
      if (broken.has(key)) return;
      broken.add(key);
      sink.warn(
        'broken-link',
        `${kind === 'link' ? 'link' : `\`${kind}\``} "${target}" is not in the bundle`,
        line,
      );
      return;
    }
    const toConcept =
      found.kind === 'file' && found.path.endsWith('.md') && !isReserved(basenameOf(found.path));
    edges.push({
      from: concept.id,
      to: toConcept ? found.path.slice(0, -3) : found.path,
      toConcept,
      kind,
      target,
    });
  };
  const { links, footnotes } = scanBody(concept.body);
  for (const link of links) follow(link.target, 'link', concept.bodyLine + link.line - 1);
  const line = (key: string) => concept.keyLines.get(key);
  if (concept.resource && looksLikePath(concept.resource) && /[/.]/.test(concept.resource))
    follow(concept.resource, 'resource', line('resource'));
  for (const source of concept.sources) {
    // A scope descriptor ("all queries in project X") is not a path; a bare word is an external name.
    if (looksLikePath(source.resource) && /[/.]/.test(source.resource))
      follow(source.resource, 'source', line('sources'));
  }
  const contract = concept.computation;
  if (contract?.file) follow(contract.file, 'computation', line('computation'));
  if (contract?.executor?.resource) follow(contract.executor.resource, 'executor', line('executor'));
  if (contract?.attester?.resource) follow(contract.attester.resource, 'attester', line('attester'));
  // Footnote labels join into sources[].id (§5.1); a label with no source is attribution that leads nowhere.
  const ids = new Set(concept.sources.map((s) => s.id).filter(Boolean));
  if (concept.sources.length > 0)
    for (const { label, line: at } of footnotes) {
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
