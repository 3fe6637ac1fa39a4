import { createHash } from 'node:crypto';
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { DEFAULT_LIMITS } from '../../config/limits.js';
import { readFrontMatter } from '../../util/front-matter.js';
import { docTooLarge } from './limits.js';

/** One Markdown/MDX document as the docs server sees it. */
export interface Doc {
  /** Path below the folder without its extension, always with `/`: `guides/intro`. */
  slug: string;
  title: string;
  description: string;
  /** The Markdown after the front matter, as written (what `read_doc` and `doc://` return). */
  markdown: string;
  /** Absolute path of the file. */
  file: string;
  /** Size of the file as read (UTF-8 bytes): what counts towards `limits.docsTotalBytes`. */
  bytes: number;
  /** Words in `markdown`, counted once so `read_doc` need not count them at every call. */
  words: number;
}

/** A document as parsed, with the text its index is built from (which the library does not keep). */
export interface ParsedDoc extends Doc {
  /** What is indexed: the Markdown without code fences, math blocks and MDX import/export lines. */
  text: string;
}

/** `guides/intro.mdx` -> `guides/intro`. */
export function slugOf(root: string, file: string): string {
  return relative(root, file)
    .split(sep)
    .join('/')
    .replace(/\.mdx?$/i, '');
}

export interface ReadDocOptions {
  /** The folder's real path, when the caller already knows it. */
  realRoot?: string | undefined;
  /** A larger file is refused (LIMIT_EXCEEDED) unread; default `limits.docsFileBytes`'s. */
  maxBytes?: number | undefined;
}

/** A document file's text as read, with its size and SHA-256 (what a cached index entry is keyed by). */
export interface DocSource {
  text: string;
  bytes: number;
  digest: string;
}

/**
 * Reads one document. A file that resolves outside the folder (a symlink to `../secret.md`) is refused: only
 * the folder is served. So is a file over `maxBytes`, by its size, before any of it is read.
 */
export async function readDoc(root: string, file: string, options: ReadDocOptions = {}): Promise<ParsedDoc> {
  return parseDoc(slugOf(root, file), file, readDocSource(root, file, options).text);
}

/**
 * readDoc's reading, without the parsing, synchronously: a folder of 10,000 documents reads in a tenth of the
 * time it takes through fs/promises, whose per-file handle, stat and close round trips dominate (measured in
 * bench/docs.ts), and the library reads it once, at start, before it serves anything.
 */
export function readDocSource(root: string, file: string, options: ReadDocOptions = {}): DocSource {
  const real = realpathSync.native(file);
  const within = relative(options.realRoot ?? realpathSync.native(root), real);
  if (within === '' || within === '..' || within.startsWith(`..${sep}`) || isAbsolute(within)) {
    throw new Error(`${file} resolves to ${real}, outside ${root}`);
  }
  // The resolved path, not `file`: a link swapped in after the check is not followed.
  const bytes = readCapped(real, file, options.maxBytes ?? DEFAULT_LIMITS.docsFileBytes);
  return { text: bytes.toString('utf8'), bytes: bytes.length, digest: sha256(bytes) };
}

/**
 * The bytes of `real`, refused when larger than `maxBytes`. Sized by the open handle before it is read, so a
 * huge file costs no memory and a file replaced after the size check is still the one measured; opened without
 * blocking, so a FIFO named `x.md` cannot hang the server. A file that grows while it is read is cut off one
 * byte past the cap, and refused.
 */
function readCapped(real: string, file: string, maxBytes: number): Buffer {
  const fd = openSync(real, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw new Error(`${file} is not a regular file`);
    if (info.size > maxBytes) throw docTooLarge(file, info.size, maxBytes);
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      // The size as stated plus one byte (so a file that grew shows), then 64 KiB at a time while it grows.
      const want = Math.min(maxBytes + 1 - total, total <= info.size ? info.size + 1 - total : 64 * 1024);
      if (want <= 0) break;
      const chunk = Buffer.allocUnsafe(want);
      const bytesRead = readSync(fd, chunk, 0, want, null);
      if (bytesRead === 0) break;
      chunks.push(chunk.subarray(0, bytesRead));
      total += bytesRead;
    }
    if (total > maxBytes) throw docTooLarge(file, fstatSync(fd).size, maxBytes);
    return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}

function sha256(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

/** The text as the front matter reader sees it (no BOM, LF line ends): `Doc.markdown` is a suffix of it. */
export function normalizedSource(source: string): string {
  return source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
}

/**
 * Splits off YAML front matter (util/front-matter.ts) and derives the title and description: from the front
 * matter, else the first heading and the first paragraph. Only a YAML mapping is front matter: a document may
 * well open with a `---` rule around a paragraph, and front matter that is not valid YAML is kept as text
 * rather than lost; either way the document is still served.
 */
export function parseDoc(slug: string, file: string, source: string): ParsedDoc {
  const matter = readFrontMatter(source);
  const isMatter = matter.present && matter.problems.length === 0;
  const data = isMatter ? matter.data : {};
  const body = isMatter ? matter.body : normalizedSource(source);
  const text = indexableText(body);
  const heading = /^#{1,6}\s+(.+?)\s*#*\s*$/m.exec(body)?.[1];
  const title = oneLine(stringField(data.title) ?? heading ?? slug.split('/').at(-1) ?? slug);
  const description = stringField(data.description) ?? stringField(data.summary) ?? firstParagraph(body);
  const bytes = Buffer.byteLength(source);
  return { slug, title, description, markdown: body, text, file, bytes, words: countWords(body) };
}

/** A title goes into every search result and resource listing: one line, like the description. */
function oneLine(text: string, max = 200): string {
  const line = text.length > max * 2 ? text.slice(0, max * 2) : text;
  const flat = line.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 3)}...` : flat;
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

/** Words (runs of non-space) in `text`, counted without building a list of them. */
export function countWords(text: string): number {
  const word = /\S+/g;
  let count = 0;
  while (word.exec(text)) count++;
  return count;
}

export interface FirstWordsOptions {
  /** The words in the whole text, when known (Doc.words): then the rest is not scanned to count them. */
  words?: number | undefined;
  /** At most this many characters are returned, whatever `maxWords` says (one "word" can be megabytes long). */
  maxChars?: number | undefined;
}

/**
 * The first `maxWords` words of `markdown`, keeping its line breaks; `rest` counts the words left out and
 * `cut` says `maxChars` ended the text before `maxWords` did (a word cut in two counts as given). Only the text
 * returned is scanned (and, without `words`, counted to the end), so the cost follows what was asked for.
 */
export function firstWords(
  markdown: string,
  maxWords: number,
  options: FirstWordsOptions = {},
): { text: string; rest: number; cut?: boolean } {
  const maxChars = options.maxChars ?? Number.POSITIVE_INFINITY;
  let head = markdown;
  if (markdown.length > maxChars) {
    head = markdown.slice(0, maxChars);
    // Not half a character: a high surrogate without its pair is not text.
    if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  }
  const word = /\S+/g;
  let given = 0;
  let end = 0;
  for (let match = word.exec(head); match && given < maxWords; match = word.exec(head)) {
    given++;
    end = match.index + match[0].length;
  }
  const rest = Math.max(0, (options.words ?? countWords(markdown)) - given);
  const text = head.slice(0, end).trim();
  const shortened = head.length < markdown.length;
  const split = shortened && end === head.length && /\S/.test(markdown.charAt(end));
  return split || (shortened && given < maxWords && rest > 0) ? { text, rest, cut: true } : { text, rest };
}
