import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';

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

export const DOC_EXTENSIONS = ['.md', '.mdx'] as const;

/** `guides/intro.mdx` -> `guides/intro`. */
export function slugOf(root: string, file: string): string {
  return relative(root, file)
    .split(sep)
    .join('/')
    .replace(/\.mdx?$/i, '');
}

export function isDocFile(name: string): boolean {
  const lower = name.toLowerCase();
  return DOC_EXTENSIONS.some((ext) => lower.endsWith(ext));
}

/** Folders never indexed: dependencies, build output and anything hidden. */
export function isSkippedDir(name: string): boolean {
  return name.startsWith('.') || name === 'node_modules' || name === 'dist';
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

export async function readDoc(root: string, file: string): Promise<Doc> {
  return parseDoc(slugOf(root, file), file, await readFile(file, 'utf8'));
}

/**
 * Splits off YAML front matter (`---` alone on the first line, up to the next `---` line; a BOM and CRLF are
 * fine) and derives the title and description: from the front matter, else the first heading and the first
 * paragraph. Front matter that is not valid YAML is kept as text rather than failing the whole folder.
 */
export function parseDoc(slug: string, file: string, source: string): Doc {
  const { data, body } = splitFrontMatter(source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n'));
  const text = indexableText(body);
  const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(body)?.[1];
  const title = stringField(data.title) ?? heading ?? slug.split('/').at(-1) ?? slug;
  const description = stringField(data.description) ?? stringField(data.summary) ?? firstParagraph(body);
  return { slug, title, description, markdown: body, text, file };
}

function splitFrontMatter(source: string): { data: Record<string, unknown>; body: string } {
  if (!source.startsWith('---\n')) return { data: {}, body: source };
  const end = source.indexOf('\n---', 3);
  if (end === -1) return { data: {}, body: source };
  const after = source.indexOf('\n', end + 4);
  const closing = source.slice(end + 1, after === -1 ? undefined : after).trim();
  if (closing !== '---') return { data: {}, body: source };
  try {
    const data = parseYaml(source.slice(4, end + 1));
    const body = after === -1 ? '' : source.slice(after + 1);
    return { data: typeof data === 'object' && data !== null ? (data as Record<string, unknown>) : {}, body };
  } catch {
    return { data: {}, body: source };
  }
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
