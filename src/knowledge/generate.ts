import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, posix, relative, resolve, sep } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Document, isCollection } from 'yaml';
import { TackError } from '../errors.js';
import { isDocFile } from '../util/doc-files.js';
import { readFrontMatter } from '../util/front-matter.js';
import { DEFAULT_MAX_DEPTH, isSkippedDir, walkTree } from '../util/walk-tree.js';
import { loadBundle } from './bundle.js';
import { writeIndexes } from './index-file.js';
import { encodePath, isUrl } from './link-targets.js';
import { atxHeading, bodyLinks, codeLines } from './links.js';
import { INDEX_FILE } from './reserved.js';
import { okfNow } from './time.js';

/** The actor (§7) every generated concept names in `generated.by`. */
export const GENERATOR_ACTOR = 'process:tack-knowledge-init';

/**
 * `Reference` rather than `Document`: it is one of the spec's own example types (§4.1), and §6.3 uses
 * "references" for exactly this, external material mirrored into a bundle as first-class concepts. The docs
 * folder stays the source of truth (`sources[0]` points back at it); the concept is a reference copy.
 */
export const GENERATED_TYPE = 'Reference';

/** The `sources[].id` of the document a concept was made from. */
export const ORIGIN_SOURCE_ID = 'origin';

/** Where `generateBundle` reads Markdown from and writes the starter bundle to. */
export interface GenerateOptions {
  /** A folder of Markdown (.md, .mdx) documents. */
  from: string;
  /** The bundle folder to write; must be absent or empty unless `force`. */
  out: string;
  /** `generated.at` of every concept (default: the current time). */
  now?: Date;
  /**
   * Write into a non-empty `out`. Files of the same name are replaced; nothing is deleted, so concepts left
   * from an earlier run stay (deleting would let a mistyped `--out` with `--force` wipe a folder).
   */
  force?: boolean;
}

/** What `generateBundle` wrote, and the files it skipped with why. */
export interface GenerateResult {
  /** Bundle-relative paths of every file written (concepts and index.md files), sorted. */
  written: string[];
  concepts: number;
  /** Files of the docs folder that did not become concepts, docs-folder-relative. */
  skipped: Array<{ file: string; reason: string }>;
}

/** Files read or written at once: enough to keep the disk busy, few enough to stay under the open-file limit. */
const FILE_CONCURRENCY = 64;
const MAX_DESCRIPTION = 200;
/** How much of a title or first paragraph is read to make a title or description of. */
const MAX_SCAN = 4000;
const MDX_LINE = /^(import|export)\s/;

interface SourceDoc {
  /** Docs-folder-relative, `/` separated, with its extension. */
  rel: string;
  file: string;
  source: string;
  mtime: Date;
  /** Bundle-relative path of the concept it becomes. */
  target?: string;
}

/**
 * Makes an OKF bundle from a folder of Markdown documents: one `Reference` concept per document, in the same
 * folder layout, with `status: draft` (nobody has reviewed it), provenance back to the document, and index.md
 * files with `okf_version: "0.2"` at the root. Links between documents are rewritten to the concepts they
 * became (an .mdx becomes .md, a reserved name is renamed); links to other files in the docs folder are
 * rewritten to point back at them.
 *
 * Reserved names (§3.1): a document named index.md (a docs site's section landing page) becomes
 * `overview.md`, log.md becomes `log-doc.md`; when that name is taken too, `index-doc.md`, then `-2`, `-3`.
 */
export async function generateBundle(options: GenerateOptions): Promise<GenerateResult> {
  const from = resolve(options.from);
  const out = resolve(options.out);
  const now = options.now ?? new Date();
  await checkFolders(options, from, out);

  const skipped: GenerateResult['skipped'] = [];
  const found = await walk(from, out, skipped);
  const read = new Array<SourceDoc | undefined>(found.length);
  await pool(found.keys(), async (i) => {
    const rel = found[i]!;
    const file = join(from, ...rel.split('/'));
    try {
      const [source, info] = await Promise.all([readFile(file, 'utf8'), stat(file)]);
      if (source.trim() === '') skipped.push({ file: rel, reason: 'empty document' });
      else read[i] = { rel, file, source, mtime: info.mtime };
    } catch (error) {
      skipped.push({ file: rel, reason: `cannot read: ${(error as Error).message}` });
    }
  });
  const docs = read.filter((d) => d !== undefined);
  if (docs.length === 0)
    throw new TackError('USAGE', `no Markdown documents (.md, .mdx) in ${options.from}`, {
      subject: { file: from },
      hint: 'Pass the folder that holds the documentation to turn into a knowledge bundle.',
    });
  assignTargets(docs);

  const byRel = new Map(docs.map((d) => [d.rel, d.target!]));
  const byStem = new Map(docs.map((d) => [stripExtension(d.rel), d.target!]));
  const folders = new Set(
    docs.flatMap((d) =>
      d.rel
        .split('/')
        .slice(0, -1)
        .map((_, i, all) => all.slice(0, i + 1).join('/')),
    ),
  );
  const at = okfNow(now);
  const files = docs.map((doc) => ({
    path: doc.target!,
    text: renderConcept(doc, { from, out, at, byRel, byStem, folders }),
  }));

  await mkdir(out, { recursive: true });
  await pool(files, async ({ path, text }) => {
    const full = join(out, ...path.split('/'));
    await mkdir(dirname(full), { recursive: true });
    await writeFile(full, text);
  });
  // The root declares the OKF version. An index.md already there (--force into a bundle) is someone's: it is
  // kept, and writeIndexes only changes its generated block.
  const rootIndex = join(out, INDEX_FILE);
  const created = !existsSync(rootIndex);
  if (created) await writeFile(rootIndex, '---\nokf_version: "0.2"\n---\n');
  const indexes = await writeIndexes(await loadBundle(out));
  return {
    written: [...new Set([...files.map((f) => f.path), ...indexes, ...(created ? [INDEX_FILE] : [])])].sort(),
    concepts: docs.length,
    skipped: skipped.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : 0)),
  };
}

async function checkFolders(options: GenerateOptions, from: string, out: string): Promise<void> {
  const fromInfo = await stat(from).catch(() => undefined);
  if (!fromInfo?.isDirectory())
    throw new TackError('USAGE', `${options.from} is not a folder`, {
      subject: { file: from },
      hint: 'Pass the folder that holds the documentation (.md, .mdx) to turn into a knowledge bundle.',
    });
  // Writing a concept over the document it was made from would destroy the documentation, force or not.
  if (within(out, from))
    throw new TackError('USAGE', `the bundle folder ${options.out} must not be or contain the docs folder`, {
      subject: { file: out },
      hint: 'Pick a new folder for the bundle, such as knowledge/ next to docs/.',
    });
  const outInfo = await stat(out).catch(() => undefined);
  if (outInfo && !outInfo.isDirectory())
    throw new TackError('USAGE', `${options.out} exists and is not a folder`, { subject: { file: out } });
  if (outInfo && !options.force && (await readdir(out)).length > 0)
    throw new TackError('USAGE', `${options.out} is not empty; pass --force to write into it anyway`, {
      subject: { file: out },
      hint: 'With --force, files of the same name are replaced and nothing else is removed.',
    });
}

/** Whether `inner` is `outer` or below it. */
function within(outer: string, inner: string): boolean {
  const rel = relative(outer, inner);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

/**
 * The docs folder's Markdown files, sorted. Hidden folders, node_modules and dist are left out as the docs
 * server leaves them out, and so is the bundle folder when it is inside the docs folder (a second run would
 * otherwise read the first run's concepts as documents). Other files are reported as skipped.
 */
async function walk(from: string, out: string, skipped: GenerateResult['skipped']): Promise<string[]> {
  const found: string[] = [];
  const below = (path: string) => relative(from, path).split(sep).join('/');
  const tree = walkTree(from, {
    skipDir: (name, path) => {
      if (name.startsWith('.') || resolve(path) !== out) return isSkippedDir(name);
      skipped.push({ file: `${below(path)}/`, reason: 'the bundle folder itself' });
      return true;
    },
    onTooDeep: (path) =>
      skipped.push({ file: `${below(path)}/`, reason: `more than ${DEFAULT_MAX_DEPTH} folders deep` }),
    onUnreadable: (_path, error) => {
      throw error;
    },
  });
  for (const { rel, name, kind } of tree) {
    if (name.startsWith('.') || kind === 'dir') continue;
    // The docs server does not follow links out of its folder either.
    if (kind === 'link') skipped.push({ file: rel, reason: 'symbolic link, not followed' });
    else if (kind === 'file') {
      if (isDocFile(name)) found.push(rel);
      else skipped.push({ file: rel, reason: 'not Markdown (.md, .mdx)' });
    }
  }
  return found;
}

/**
 * Picks each document's concept path. Documents that keep their own name go first, so a real `overview.md`
 * keeps its name and the renamed index.md takes the fallback. Names are compared case-insensitively: on
 * macOS and Windows `Index.md` and the bundle's `index.md` would be one file.
 */
function assignTargets(docs: SourceDoc[]): void {
  const taken = new Set<string>();
  const wanted = docs.map((doc) => {
    const stem = stripExtension(doc.rel);
    const cut = stem.lastIndexOf('/');
    const base = stem.slice(cut + 1);
    const lower = base.toLowerCase();
    const names =
      lower === 'index' ? ['overview', `${base}-doc`] : lower === 'log' ? [`${base}-doc`] : [base];
    const rank = lower === 'index' || lower === 'log' ? 2 : /\.mdx$/i.test(doc.rel) ? 1 : 0;
    return { doc, folder: stem.slice(0, cut + 1), names, rank };
  });
  wanted.sort((a, b) => a.rank - b.rank || (a.doc.rel < b.doc.rel ? -1 : 1));
  const free = (path: string) => !taken.has(path.toLowerCase());
  for (const { doc, folder, names } of wanted) {
    let target = names.map((name) => `${folder}${name}.md`).find(free);
    for (let n = 2; target === undefined; n++) {
      const numbered = `${folder}${names.at(-1)}-${n}.md`;
      if (free(numbered)) target = numbered;
    }
    doc.target = target;
    taken.add(target.toLowerCase());
  }
}

interface RenderContext {
  from: string;
  out: string;
  at: string;
  byRel: ReadonlyMap<string, string>;
  byStem: ReadonlyMap<string, string>;
  /** Docs-folder-relative folders that hold documents, so also exist in the bundle. */
  folders: ReadonlySet<string>;
}

function renderConcept(doc: SourceDoc, ctx: RenderContext): string {
  const matter = readFrontMatter(doc.source);
  const data = matter.problems.length === 0 ? matter.data : {};
  // A closed front matter block that is not valid YAML is dropped as well: it is still the document's
  // metadata, not its content.
  const mdx = /\.mdx$/i.test(doc.rel);
  const body = rewriteBody(matter.body, mdx, (target) => mapLink(target, doc, ctx));
  const title =
    cleanTitle(nonEmpty(data.title) ?? firstHeading(body) ?? '') || stripExtension(doc.rel).split('/').pop()!;
  const description =
    oneLine(nonEmpty(data.description) ?? nonEmpty(data.summary) ?? '') || firstSentence(body);
  const tags = readTags(data.tags) ?? readTags(data.keywords) ?? folderTags(doc.rel);
  const front: Record<string, unknown> = { type: GENERATED_TYPE, title };
  if (description) front.description = description;
  if (tags.length > 0) front.tags = tags;
  front.status = 'draft';
  front.generated = { by: GENERATOR_ACTOR, at: ctx.at };
  front.sources = [
    { id: ORIGIN_SOURCE_ID, resource: originOf(doc, ctx), title, last_modified: okfNow(doc.mtime) },
  ];
  // Flow style for tags and generated, as the spec's examples write them; lineWidth 0 keeps a long
  // description on one line instead of folding it.
  const yaml = new Document(front);
  for (const key of ['tags', 'generated']) {
    const node = yaml.get(key, true);
    if (isCollection(node)) node.flow = true;
  }
  const frontText = yaml.toString({ lineWidth: 0, flowCollectionPadding: false });
  return `---\n${frontText}---\n\n${body.replace(/^\s*\n/, '').trimEnd()}\n`;
}

/**
 * `sources[0].resource`: the document as a path relative to the concept's own file, the form §6.2 gives
 * relative paths and the one bundle.ts resolves first. Relative rather than a file:// URL so a bundle
 * committed beside its docs stays valid in every clone and names no one's home folder; a file:// URL only
 * when there is no relative path (another drive on Windows).
 */
function originOf(doc: SourceDoc, ctx: RenderContext): string {
  return relativeFrom(join(ctx.out, ...dirname(doc.target!).split('/')), doc.file);
}

function relativeFrom(folder: string, file: string): string {
  const rel = relative(folder, file);
  return isAbsolute(rel) ? pathToFileURL(file).href : rel.split(sep).join('/');
}

/**
 * Where a link of the document should point in the bundle, or undefined to leave it. Only relative links
 * are followed: `/x` in a docs site is a route of the site, not a file.
 */
function mapLink(target: string, doc: SourceDoc, ctx: RenderContext): string | undefined {
  if (isUrl(target) || target.startsWith('#') || target.startsWith('/')) return undefined;
  const [, rawPath = '', suffix = ''] = /^([^?#]*)(.*)$/.exec(target)!;
  if (rawPath === '') return undefined;
  let path: string;
  try {
    path = decodeURIComponent(rawPath);
  } catch {
    path = rawPath;
  }
  const resolved = posix.normalize(posix.join(posix.dirname(doc.rel), path)).replace(/\/+$/, '');
  if (resolved === '.') return undefined;
  const conceptFolder = posix.dirname(doc.target!);
  const concept =
    ctx.byRel.get(resolved) ?? (/\.[^/]*$/.test(resolved) ? undefined : ctx.byStem.get(resolved));
  let mapped: string | undefined;
  if (concept) mapped = posix.relative(conceptFolder, concept);
  else {
    const file = resolve(ctx.from, resolved);
    // A folder of documents is a folder of the bundle too; any other file or folder stays in the docs folder.
    if (!existsSync(file) || ctx.folders.has(resolved)) return undefined;
    mapped = relativeFrom(join(ctx.out, ...conceptFolder.split('/')), file);
  }
  if (mapped === path) return undefined;
  const encoded = mapped.startsWith('file:') ? mapped : encodePath(mapped);
  return `${encoded}${suffix}`;
}

/**
 * Rewrites link targets (bodyLinks: inline links, images, reference definitions, outside code) and, for MDX,
 * drops the import/export lines outside code, which mean nothing outside the docs site's build.
 */
function rewriteBody(body: string, mdx: boolean, map: (target: string) => string | undefined): string {
  const parts: string[] = [];
  let at = 0;
  for (const link of bodyLinks(body)) {
    const to = map(link.target);
    if (to === undefined) continue;
    parts.push(body.slice(at, link.start), to);
    at = link.end;
  }
  parts.push(body.slice(at));
  const rewritten = parts.join('');
  if (!mdx) return rewritten;
  // Targets hold no line breaks, so the lines of the rewritten body are the lines of the original.
  const code = codeLines(body);
  return rewritten
    .split('\n')
    .filter((line, i) => code[i] || !MDX_LINE.test(line))
    .join('\n');
}

/** The text of the first heading with text (any level, as the docs server takes it), outside code. */
function firstHeading(body: string): string | undefined {
  const code = codeLines(body);
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const text = code[i] ? undefined : atxHeading(lines[i]!)?.text;
    if (text) return text;
  }
  return undefined;
}

/** The body with its code lines (fenced and indented) blanked. */
function withoutCode(body: string): string {
  const code = codeLines(body);
  return body
    .split('\n')
    .map((line, i) => (code[i] ? '' : line))
    .join('\n');
}

/** The first sentence of the first prose paragraph, as plain text on one line, at most ~200 characters. */
function firstSentence(body: string): string {
  const blocks = withoutComments(withoutCode(body))
    .split(/\n\s*\n/)
    .map((block) => block.replace(/^\n+/, ''));
  const prose = blocks.find((block) => {
    const first = block.split('\n')[0] ?? '';
    const second = block.split('\n')[1] ?? '';
    if (first.trim() === '' || /^ {4}|^\t/.test(first)) return false;
    // Headings, lists, quotes, tables, HTML/JSX, rules, images, reference definitions, admonitions, math.
    if (
      /^\s*(#|[-*+]\s|\d+[.)]\s|>|\||<|!\[|\[[^\]]*\]:|:::|\$\$|\{|---|\*\*\*|___|import\s|export\s)/.test(
        first,
      )
    )
      return false;
    return !/^\s*(=+|-+)\s*$/.test(second);
  });
  if (!prose) return '';
  // The first sentence is wanted, at most MAX_DESCRIPTION long: bounding the text first keeps the replacements
  // below (each can take time quadratic in a hostile paragraph) cheap.
  const plain = oneLine(
    prose
      .slice(0, MAX_SCAN)
      .replace(/!\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[\^[^\]]+\]/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
      .replace(/<\/?[A-Za-z][^>]*>/g, '')
      .replace(/(\*\*|__)(.+?)\1/g, '$2'),
  );
  const end = sentenceEnd(plain);
  const sentence = end === -1 ? plain : plain.slice(0, end + 1);
  if (sentence.length <= MAX_DESCRIPTION) return sentence;
  const cut = sentence.lastIndexOf(' ', MAX_DESCRIPTION - 3);
  return `${sentence.slice(0, cut > MAX_DESCRIPTION / 2 ? cut : MAX_DESCRIPTION - 3).replace(/[\s,;:]+$/, '')}...`;
}

/** The index of the period (or ! ?) that ends the first sentence, not counting e.g., i.e., etc., v0.2. */
function sentenceEnd(text: string): number {
  for (const match of text.matchAll(/[.!?](?=\s+\S|$)/g)) {
    const before = text.slice(0, match.index + 1);
    if (/\b(e\.g|i\.e|etc|vs|cf|approx|incl|no|fig|Mr|Mrs|Ms|Dr|St)\.$/i.test(before)) continue;
    return match.index;
  }
  return -1;
}

/**
 * A heading as a title: on one line, link syntax reduced to its text, a `{#custom-id}` anchor dropped. The
 * anchor is cut by hand and the text bounded first: the regexes this replaces were quadratic in a long title.
 */
function cleanTitle(title: string): string {
  let text = oneLine(title).slice(0, MAX_SCAN);
  if (text.endsWith('}')) {
    const open = text.lastIndexOf('{#');
    if (open !== -1 && !text.slice(open, -1).includes('}')) text = text.slice(0, open);
  }
  return oneLine(text.replace(/\[([^\]]*)\]\([^)]*\)/g, '$1'));
}

/** `<!-- ... -->` comments removed (an unclosed one runs to the end), in one pass. */
function withoutComments(text: string): string {
  const parts: string[] = [];
  let at = 0;
  for (let open = text.indexOf('<!--'); open !== -1; open = text.indexOf('<!--', at)) {
    parts.push(text.slice(at, open));
    const close = text.indexOf('-->', open + 4);
    at = close === -1 ? text.length : close + 3;
  }
  parts.push(text.slice(at));
  return parts.join('');
}

function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined;
}

/** `tags` or `keywords` as written: a list (Docusaurus tags may be `{ label }` objects) or a comma list. */
function readTags(value: unknown): string[] | undefined {
  const raw = typeof value === 'string' ? value.split(',') : Array.isArray(value) ? value : undefined;
  if (!raw) return undefined;
  const tags = raw
    .map((t: unknown) =>
      typeof t === 'string' || typeof t === 'number'
        ? String(t)
        : typeof t === 'object' && t !== null && typeof (t as { label?: unknown }).label === 'string'
          ? (t as { label: string }).label
          : '',
    )
    .map(oneLine)
    .filter((t) => t !== '');
  return tags.length > 0 ? [...new Set(tags)] : undefined;
}

/** `guides/Advanced/x.md` → `[guides, advanced]`: the folders a document sits in are its topics. */
function folderTags(rel: string): string[] {
  return [
    ...new Set(
      rel
        .split('/')
        .slice(0, -1)
        .map((f) => f.toLowerCase()),
    ),
  ];
}

function stripExtension(path: string): string {
  return path.replace(/\.mdx?$/i, '');
}

/** Runs `work` over `items`, a bounded number at a time. */
async function pool<T>(items: Iterable<T>, work: (item: T) => Promise<void>): Promise<void> {
  const list = [...items];
  let next = 0;
  const worker = async () => {
    while (next < list.length) await work(list[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(FILE_CONCURRENCY, list.length) }, worker));
}
