import { lstat, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { TackError } from '../errors.js';
import { readFrontMatter } from '../util/front-matter.js';
import { compareText } from '../util/text-order.js';
import type { KnowledgeBundle } from './bundle.js';
import type { Concept } from './concept.js';
import { IssueSink, type KnowledgeIssue } from './issues.js';
import { diskLookup, encodePath, isUrl, type PathLookup, resolveInBundle } from './link-targets.js';
import { codeLines } from './links.js';
import { ENTRY, INDEX_FILE, parseIndexFile } from './reserved.js';

/**
 * index.md files for progressive disclosure (§8), kept without losing what people wrote in them.
 *
 * Ownership: the generator owns the lines between its two marker comments (GENERATED_BEGIN, GENERATED_END) and
 * nothing else. Every line outside them (front matter, prose, headings, curated entries, comments) is kept byte
 * for byte and in place. Inside, it writes one entry for each concept of the folder and each subfolder holding
 * concepts that no line outside already links to, so a curated entry is never duplicated; an entry inside whose
 * concept is gone is simply not written again. A file without markers gets the block appended only when
 * something is missing from it, so an index that already lists everything (every real bundle's) stays as it is.
 *
 * Markers rather than "a line that reads as the generator would write it": once a concept is removed, or its
 * description changes, nothing in such a line says who wrote it, and a curated entry would be dropped or
 * rewritten.
 */
export const GENERATED_BEGIN =
  '<!-- tack:generated-index: lines up to the closing marker are rewritten by `tack knowledge index --write` -->';
export const GENERATED_END = '<!-- /tack:generated-index -->';

const BEGIN_LINE = /^<!--\s*tack:generated-index\b.*-->$/;
const END_LINE = /^<!--\s*\/tack:generated-index\s*-->$/;

/** One index.md as it is and as the generator would leave it. */
export interface IndexFilePlan {
  /** Bundle-relative, `/` separated. */
  path: string;
  /** The file now; undefined when there is none. */
  before: string | undefined;
  after: string;
  changed: boolean;
}

export interface IndexPlan {
  root: string;
  /** Every index.md the generator looked at, deepest folders first. */
  files: IndexFilePlan[];
  /** Lines kept that point at nothing in the bundle (`index-entry-kept`): a person wrote them, a person removes them. */
  warnings: KnowledgeIssue[];
}

/**
 * What `writeIndexes` would do to each index.md of the bundle, without writing: for every folder that holds
 * concepts (and its parents), and every folder that has an index.md already. Reads the index files from disk.
 * A file whose markers are broken (one without the other, out of order, twice) is a KNOWLEDGE_BUNDLE error:
 * guessing where the generated lines end could delete hand-written ones.
 */
export async function planIndexes(bundle: KnowledgeBundle): Promise<IndexPlan> {
  const byFolder = new Map<string, Concept[]>();
  const withConcepts = new Set<string>(['']);
  for (const concept of bundle.concepts.values()) {
    const folder = parentOf(concept.path);
    const list = byFolder.get(folder) ?? [];
    list.push(concept);
    byFolder.set(folder, list);
    for (let f = folder; f !== ''; f = parentOf(f)) withConcepts.add(f);
  }
  const children = new Map<string, string[]>();
  for (const folder of withConcepts) {
    if (folder === '') continue;
    const siblings = children.get(parentOf(folder));
    if (siblings) siblings.push(folder);
    else children.set(parentOf(folder), [folder]);
  }
  const countBelow = (folder: string): number =>
    (byFolder.get(folder)?.length ?? 0) + (children.get(folder) ?? []).reduce((n, f) => n + countBelow(f), 0);

  const folders = [...new Set([...withConcepts, ...bundle.indexes.keys()])];
  // Deepest first: a subfolder's entry in its parent is described from the subfolder's index as it will be.
  folders.sort((a, b) => depthOf(b) - depthOf(a) || (a < b ? -1 : a > b ? 1 : 0));
  const lookup = diskLookup(bundle.root);
  const planned = new Map<string, string>();
  const files: IndexFilePlan[] = [];
  const warnings: KnowledgeIssue[] = [];
  for (const folder of folders) {
    const path = folder === '' ? INDEX_FILE : `${folder}/${INDEX_FILE}`;
    // The loader does not follow symlinks, and neither does a write: an index.md linking to ~/.bashrc is not
    // the bundle's file to append to.
    const info = await lstat(join(bundle.root, path)).catch(() => undefined);
    if (info && !info.isFile()) {
      warnings.push({
        severity: 'warning',
        code: 'index-not-file',
        file: path,
        message: 'not a regular file (a symbolic link?); left as it is',
      });
      continue;
    }
    const before = await readFile(join(bundle.root, path), 'utf8').catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return undefined;
      throw error;
    });
    const subfolders = (children.get(folder) ?? []).sort();
    const sink = new IssueSink(path);
    const after = mergeIndex(before ?? '', {
      path,
      root: bundle.root,
      lookup,
      sink,
      concepts: byFolder.get(folder) ?? [],
      subfolders: subfolders.map((sub) => ({
        folder: sub,
        description: subfolderDescription(sub, planned.get(sub), countBelow(sub)),
      })),
    });
    planned.set(folder, after);
    for (const issue of sink.issues) warnings.push(issue);
    files.push({ path, before, after, changed: after !== before });
  }
  // A folder with nothing to list and no index.md gets none.
  const kept = files.filter((f) => f.before !== undefined || f.after !== '');
  return { root: bundle.root, files: kept, warnings };
}

/** Applies a plan: writes the files that change; returns their paths (bundle-relative). */
export async function applyIndexPlan(plan: IndexPlan): Promise<string[]> {
  const changed = plan.files.filter((f) => f.changed);
  await Promise.all(changed.map((f) => writeFile(join(plan.root, f.path), f.after)));
  return changed.map((f) => f.path);
}

/** planIndexes, then applyIndexPlan: returns the paths written. */
export async function writeIndexes(bundle: KnowledgeBundle): Promise<string[]> {
  return applyIndexPlan(await planIndexes(bundle));
}

interface MergeContext {
  path: string;
  root: string;
  lookup: PathLookup;
  sink: IssueSink;
  concepts: readonly Concept[];
  subfolders: ReadonlyArray<{ folder: string; description: string }>;
}

/** The index text with the generated block rewritten (or appended when something is missing and there is none). */
function mergeIndex(text: string, ctx: MergeContext): string {
  const eol = text.includes('\r\n') ? '\r\n' : '\n';
  const lines = text.split('\n');
  const head = headLines(text);
  const code = codeLines(
    lines
      .slice(head)
      .map((l) => l.replace(/\r$/, ''))
      .join('\n'),
  );
  let begin = -1;
  let end = -1;
  for (let i = head; i < lines.length; i++) {
    if (code[i - head]) continue;
    const line = lines[i]!.replace(/\r$/, '').trim();
    const problem = (what: string) =>
      new TackError('KNOWLEDGE_BUNDLE', `${ctx.path}:${i + 1}: ${what}`, {
        subject: { file: join(ctx.root, ctx.path) },
        hint: `Keep one "${GENERATED_BEGIN}" line followed by one "${GENERATED_END}" line, or delete both to hand the file back to people; nothing was written.`,
      });
    if (BEGIN_LINE.test(line)) {
      if (begin !== -1) throw problem('a second opening marker of the generated index');
      begin = i;
    } else if (END_LINE.test(line)) {
      if (begin === -1) throw problem('a closing marker of the generated index before its opening one');
      if (end !== -1) throw problem('a second closing marker of the generated index');
      end = i;
    }
  }
  if (begin !== -1 && end === -1)
    throw new TackError('KNOWLEDGE_BUNDLE', `${ctx.path}:${begin + 1}: the generated index is not closed`, {
      subject: { file: join(ctx.root, ctx.path) },
      hint: `Add the line "${GENERATED_END}" where the generated entries end; nothing was written.`,
    });

  // What people listed outside the block: those concepts and subfolders are not listed again inside it.
  const listed = new Set<string>();
  for (let i = head; i < lines.length; i++) {
    if (code[i - head] || (begin !== -1 && i >= begin && i <= end)) continue;
    const entry = ENTRY.exec(lines[i]!.replace(/\r$/, ''));
    if (!entry) continue;
    const target = entry[2]!;
    if (isUrl(target) || target.startsWith('#')) continue;
    const found = resolveInBundle(ctx.root, ctx.path, target, ctx.lookup);
    if (found) listed.add(found.kind === 'file' ? found.path.replace(/(^|\/)index\.md$/, '') : found.path);
    else
      ctx.sink.warn(
        'index-entry-kept',
        `entry "${entry[1]}" points at "${target}", which is not in the bundle; kept, since it is not a generated line: remove it by hand if it is gone for good`,
        i + 1,
      );
  }

  const block = generatedLines(ctx, listed);
  if (begin !== -1) {
    const inside = lines.slice(begin + 1, end).map((l) => l.replace(/\r$/, ''));
    if (sameLines(inside, block)) return text;
    return [
      ...lines.slice(0, begin + 1),
      ...block.map((l) => (eol === '\r\n' ? `${l}\r` : l)),
      ...lines.slice(end),
    ].join('\n');
  }
  if (block.length === 0) return text;
  const appended = [GENERATED_BEGIN, ...block, GENERATED_END, ''].join(eol);
  if (text === '') return appended;
  const ended = text.endsWith('\n') ? text : `${text}${eol}`;
  // A blank line between what was there and the block.
  return /(\r?\n){2}$/.test(ended) ? `${ended}${appended}` : `${ended}${eol}${appended}`;
}

/** The entries the generator owns for one folder: a section per type (sorted), then `# Subdirectories`. */
function generatedLines(ctx: MergeContext, listed: ReadonlySet<string>): string[] {
  const concepts = ctx.concepts.filter((c) => !listed.has(c.path));
  const subfolders = ctx.subfolders.filter((s) => !listed.has(s.folder));
  const out: string[] = [];
  const types = [...new Set(concepts.map((c) => c.type))].sort((a, b) => compareText(a, b));
  for (const type of types) {
    if (out.length > 0) out.push('');
    out.push(`# ${type}`, '');
    for (const c of concepts.filter((x) => x.type === type).sort((a, b) => compareText(a.title, b.title)))
      out.push(entry(c.title, fileName(c.path), c.description));
  }
  if (subfolders.length > 0) {
    if (out.length > 0) out.push('');
    out.push('# Subdirectories', '');
    for (const sub of subfolders) {
      const name = fileName(sub.folder);
      out.push(entry(name, `${name}/${INDEX_FILE}`, sub.description));
    }
  }
  return out;
}

/** `Metric; 3 concepts`: the section of the subfolder index's first described entry, and what it holds. */
function subfolderDescription(folder: string, index: string | undefined, count: number): string {
  const described =
    index === undefined
      ? undefined
      : parseIndexFile(`${folder}/${INDEX_FILE}`, index).index.entries.find((e) => e.description)?.section;
  const what = `${count} concept${count === 1 ? '' : 's'}`;
  return described ? `${described}; ${what}` : what;
}

/** How many lines the front matter takes (root index.md: `okf_version`); they are never touched. */
function headLines(text: string): number {
  const fm = readFrontMatter(text);
  return fm.present && !fm.problems.some((p) => p.kind === 'unclosed') ? fm.bodyLine - 1 : 0;
}

function sameLines(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((line, i) => line === b[i]);
}

function entry(title: string, target: string, description: string | undefined): string {
  const safe = title.replace(/[[\]]/g, '');
  const oneLine = description?.replace(/\s+/g, ' ').trim();
  return `* [${safe}](${encodePath(target)})${oneLine ? ` - ${oneLine}` : ''}`;
}

function depthOf(folder: string): number {
  return folder === '' ? 0 : folder.split('/').length;
}

function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut === -1 ? '' : path.slice(0, cut);
}

function fileName(path: string): string {
  return path.split('/').pop()!;
}
