import { readdir, readFile, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, sep } from 'node:path';
import { isDocFile, isSkippedDir } from '../../util/doc-files.js';
import { parseFrontMatter } from '../../util/front-matter.js';

/** One Markdown/MDX document as the docs server sees it. */
export interface Doc {
  /** Path below the folder without its extension, always with `/`: `guides/intro`. */
  slug: string;
  title: string;
  description: string;
  /** The Markdown after the front matter, as written (what `read_doc` and `doc://` return). */
  markdown: string;
  /** What is indexed: the Markdown without code fences, math blocks and MDX import/export lines. */
  text: string;
  /** Absolute path of the file. */
  file: string;
}

/** `guides/intro.mdx` -> `guides/intro`. */
export function slugOf(root: string, file: string): string {
  return relative(root, file)
    .split(sep)
    .join('/')
    .replace(/\.mdx?$/i, '');
}

/** Every document file below `root`, depth first, in a stable (sorted) order. */
export async function listDocFiles(root: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    const entries = await readdir(dir, { withFileTypes: true });
    entries.sort((a, b) => a.name.localeCompare(b.name));
    for (const entry of entries) {
      if (entry.isDirectory()) {
        if (!isSkippedDir(entry.name)) await walk(join(dir, entry.name));
      } else if (entry.isFile() && isDocFile(entry.name)) {
        out.push(join(dir, entry.name));
      }
    }
  };
  await walk(root);
  return out;
}

/**
 * Reads one document. A file that resolves outside the folder (a symlink to `../secret.md`) is refused: only
 * the folder is served. `realRoot` is the folder's real path, when the caller already knows it.
 */
export async function readDoc(root: string, file: string, realRoot?: string): Promise<Doc> {
  const real = await realpath(file);
  const within = relative(realRoot ?? (await realpath(root)), real);
  if (within === '' || within === '..' || within.startsWith(`..${sep}`) || isAbsolute(within)) {
    throw new Error(`${file} resolves to ${real}, outside ${root}`);
  }
  // The resolved path, not `file`: a link swapped in after the check is not followed.
  return parseDoc(slugOf(root, file), file, await readFile(real, 'utf8'));
}

/**
 * Splits off YAML front matter (util/front-matter.ts) and derives the title and description: from the front
 * matter, else the first heading and the first paragraph. Only a YAML mapping is front matter: a document may
 * well open with a `---` rule around a paragraph, and front matter that is not valid YAML is kept as text
 * rather than lost; either way the document is still served.
 */
export function parseDoc(slug: string, file: string, source: string): Doc {
  const matter = parseFrontMatter(source);
  const isMatter = matter.present && matter.problems.length === 0;
  const data = isMatter ? matter.data : {};
  const body = isMatter ? matter.body : source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const text = indexableText(body);
  const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(body)?.[1];
  const title = stringField(data.title) ?? heading ?? slug.split('/').at(-1) ?? slug;
  const description = stringField(data.description) ?? stringField(data.summary) ?? firstParagraph(body);
  return { slug, title, description, markdown: body, text, file };
}

function stringField(value: unknown): string | undefined {
  return typeof value === 'string' && value.trim() !== '' ? value.trim() : undefined;
}

const FENCE = /^(`{3,}|~{3,})[^\n]*\n[\s\S]*?^\1[ \t]*$/gm;
const MATH = /\$\$[\s\S]*?\$\$/g;
const MDX_LINE = /^(import|export)\s.*$/gm;

/** The prose of a document, for the index: code, math and MDX plumbing are noise to a keyword search. */
export function indexableText(markdown: string): string {
  return markdown.replace(FENCE, ' ').replace(MATH, ' ').replace(MDX_LINE, ' ').replace(/\s+/g, ' ').trim();
}

function firstParagraph(body: string): string {
  const prose = body
    .replace(FENCE, '')
    .replace(MDX_LINE, '')
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .find((block) => block !== '' && !block.startsWith('#') && !block.startsWith('<'));
  if (!prose) return '';
  const oneLine = prose.replace(/\s+/g, ' ');
  return oneLine.length > 200 ? `${oneLine.slice(0, 197)}...` : oneLine;
}

/** The first `maxWords` words of `markdown`, keeping its line breaks; `rest` counts the words left out. */
export function firstWords(markdown: string, maxWords: number): { text: string; rest: number } {
  const words = [...markdown.matchAll(/\S+/g)];
  if (words.length <= maxWords) return { text: markdown.trim(), rest: 0 };
  const last = words[maxWords - 1]!;
  return { text: markdown.slice(0, last.index + last[0].length).trim(), rest: words.length - maxWords };
}
