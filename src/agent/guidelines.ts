import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { lstat, open, readFile, realpath, stat } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { findProjectRoot, resolvePaths } from '../config/paths.js';
import { errorMessage } from '../errors.js';

/**
 * Layered guidelines for the system prompt, as Codex and Claude Code read them: the user's own file, then the
 * project's AGENTS.md and CLAUDE.md from the repository root down to the working directory. Both names are read
 * because a repository written for one tool should work unchanged with tack.
 */

export interface GuidelinesLayer {
  /** Absolute real path (a symlink is followed, and where it points is what is recorded). */
  source: string;
  scope: 'user' | 'project';
  /** Bytes of this layer's content in `text` (after comments are stripped and the cap is applied). */
  bytes: number;
  truncated: boolean;
}

export interface Guidelines {
  text: string;
  /** sha256 (hex) of `text`, so a transcript can say exactly which guidelines produced an output. */
  hash: string;
  layers: GuidelinesLayer[];
  warnings: string[];
}

export interface LoadGuidelinesOptions {
  cwd: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** Where the user-level AGENTS.md lives; default `resolvePaths(env).configDir` (TACK_HOME, XDG). */
  userDir?: string;
  /** Cap over the content of all layers (default 32 KiB, Codex's project_doc_max_bytes). */
  maxBytes?: number;
}

export const DEFAULT_GUIDELINES_MAX_BYTES = 32 * 1024;

/** In this order in each folder: AGENTS.md is the cross-tool name, CLAUDE.md the one Claude Code users have. */
const FILE_NAMES = ['AGENTS.md', 'CLAUDE.md'] as const;

/** No guidelines file is legitimately this large; reading a huge one whole would only be cut afterwards. */
const MAX_FILE_BYTES = 1024 * 1024;

const PREAMBLE =
  "The guidelines below come from AGENTS.md and CLAUDE.md files, from the most general (the user's own) to " +
  'the most specific (nearest the working directory). Where they conflict, the later one wins.';

interface Candidate {
  path: string;
  scope: 'user' | 'project';
  label: string;
  dir: string;
}

interface ReadLayer {
  candidate: Candidate;
  realPath: string;
  content: string;
  truncated: boolean;
}

export async function loadGuidelines(options: LoadGuidelinesOptions): Promise<Guidelines> {
  const env = options.env ?? process.env;
  const cwd = resolve(options.cwd);
  const maxBytes = options.maxBytes ?? DEFAULT_GUIDELINES_MAX_BYTES;
  const warnings: string[] = [];

  const userDir = resolve(options.userDir ?? resolvePaths(env).configDir);
  const candidates: Candidate[] = [
    { path: join(userDir, 'AGENTS.md'), scope: 'user', label: 'AGENTS.md (user)', dir: userDir },
  ];
  const root = repositoryRoot(cwd);
  for (const dir of foldersFromRootTo(root, cwd)) {
    const where = dir === root ? 'project root' : relative(root, dir).split(sep).join('/');
    for (const name of FILE_NAMES) {
      candidates.push({ path: join(dir, name), scope: 'project', label: `${name} (${where})`, dir });
    }
  }

  const read: ReadLayer[] = [];
  const seenPaths = new Set<string>();
  for (const candidate of candidates) {
    const layer = await readLayer(candidate, warnings);
    if (!layer) continue;
    // `ln -s AGENTS.md CLAUDE.md` is the usual way to serve both tools from one file: include it once.
    if (seenPaths.has(layer.realPath)) continue;
    seenPaths.add(layer.realPath);
    // A copied rather than linked CLAUDE.md says nothing new either.
    const sibling = read.find((other) => other.candidate.dir === candidate.dir);
    if (sibling && sibling.content === layer.content) continue;
    read.push(layer);
  }

  const capped = applyCap(read, maxBytes, warnings);
  // Tags, not Markdown headings: guidelines files are full of their own headings, so a heading per layer would
  // not say where one file ends and the next begins; a closed tag with its source does, and models are trained
  // to read documents delimited this way.
  const blocks = capped
    .filter(({ content }) => content !== '')
    .map(({ layer, content, cutFrom }) => {
      const note =
        cutFrom === undefined ? '' : `\n[truncated: ${byteLength(content)} of ${cutFrom} bytes kept]`;
      return (
        `<guidelines source="${escapeAttribute(layer.candidate.label)}" path="${escapeAttribute(layer.realPath)}">\n` +
        `${content}${note}\n</guidelines>`
      );
    });
  const text = blocks.length ? [PREAMBLE, ...blocks].join('\n\n') : '';
  return {
    text,
    hash: createHash('sha256').update(text).digest('hex'),
    layers: capped.map(({ layer, content, cutFrom }) => ({
      source: layer.realPath,
      scope: layer.candidate.scope,
      bytes: byteLength(content),
      truncated: layer.truncated || cutFrom !== undefined,
    })),
    warnings,
  };
}

/**
 * The nearest folder with `.git` (a folder, or a file in a worktree), not `findProjectRoot`'s nearest marker: in
 * a monorepo a package's own tack.json must not hide the AGENTS.md at the repository root.
 */
function repositoryRoot(cwd: string): string {
  let dir = cwd;
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return findProjectRoot(cwd);
    dir = parent;
  }
}

function foldersFromRootTo(root: string, cwd: string): string[] {
  const folders = [cwd];
  let dir = cwd;
  while (dir !== root) {
    const parent = dirname(dir);
    if (parent === dir) break;
    dir = parent;
    folders.unshift(dir);
  }
  return folders;
}

async function readLayer(candidate: Candidate, warnings: string[]): Promise<ReadLayer | undefined> {
  let realPath: string;
  try {
    realPath = await realpath(candidate.path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' && !(await isDanglingLink(candidate.path))) return undefined;
    warnings.push(`${candidate.label}: cannot resolve ${candidate.path}: ${errorMessage(error)}`);
    return undefined;
  }
  try {
    const info = await stat(realPath);
    if (!info.isFile()) {
      warnings.push(`${candidate.label}: ${realPath} is not a file; skipped`);
      return undefined;
    }
    const tooLarge = info.size > MAX_FILE_BYTES;
    const raw = tooLarge ? await readHead(realPath, MAX_FILE_BYTES) : await readFile(realPath, 'utf8');
    if (tooLarge)
      warnings.push(`${candidate.label}: only the first ${MAX_FILE_BYTES} bytes of ${realPath} read`);
    const stripped = stripHtmlComments(raw.replace(/^\uFEFF/, ''));
    if (stripped.unterminated) {
      warnings.push(
        `${candidate.label}: an HTML comment is never closed; everything after its <!-- is left out`,
      );
    }
    const content = neutralizeClosingTag(stripped.text.trim());
    if (!content) return undefined;
    return { candidate, realPath, content, truncated: tooLarge };
  } catch (error) {
    warnings.push(`${candidate.label}: cannot read ${realPath}: ${errorMessage(error)}`);
    return undefined;
  }
}

async function readHead(path: string, bytes: number): Promise<string> {
  const handle = await open(path, 'r');
  try {
    const buffer = Buffer.alloc(bytes);
    const { bytesRead } = await handle.read(buffer, 0, bytes, 0);
    // The cut may fall inside a character; its undecodable remains are dropped rather than shown as U+FFFD.
    return buffer
      .subarray(0, bytesRead)
      .toString('utf8')
      .replace(/\uFFFD+$/, '');
  } finally {
    await handle.close();
  }
}

async function isDanglingLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Removes `<!-- ... -->` (notes for human maintainers, which a renderer hides too), across lines, but not inside
 * fenced code blocks, where a comment is an example the model should see. An unclosed comment hides the rest of
 * the file, as it does when the Markdown is rendered.
 */
export function stripHtmlComments(source: string): { text: string; unterminated: boolean } {
  const out: string[] = [];
  let fence: { char: string; length: number } | undefined;
  let inComment = false;
  for (const original of source.replace(/\r\n?/g, '\n').split('\n')) {
    let line = original;
    let touched = false;
    if (inComment) {
      const end = line.indexOf('-->');
      if (end < 0) continue;
      line = line.slice(end + 3);
      inComment = false;
      touched = true;
    } else if (fence) {
      out.push(line);
      const close = /^ {0,3}(`{3,}|~{3,})\s*$/.exec(line);
      if (close?.[1]?.[0] === fence.char && close[1].length >= fence.length) fence = undefined;
      continue;
    } else {
      const open = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (open?.[1]) {
        fence = { char: open[1][0]!, length: open[1].length };
        out.push(line);
        continue;
      }
    }
    let kept = '';
    for (;;) {
      const start = line.indexOf('<!--');
      if (start < 0) {
        kept += line;
        break;
      }
      touched = true;
      kept += line.slice(0, start);
      const end = line.indexOf('-->', start + 4);
      if (end < 0) {
        inComment = true;
        break;
      }
      line = line.slice(end + 3);
    }
    // A line that held only a comment goes entirely, so stripping leaves no gaps behind.
    if (touched && !kept.trim()) continue;
    out.push(kept);
  }
  return { text: out.join('\n').replace(/\n{3,}/g, '\n\n'), unterminated: inComment };
}

/**
 * The cap keeps the most specific layers whole and cuts the least specific first. The nearest file is about the
 * code being worked on and wins any conflict anyway, so what is cut is exactly what would lose a conflict; Codex
 * cuts the other way (it stops adding files from the root down), which drops the most relevant text first.
 * A layer that no longer fits keeps its beginning, where overviews and the most important rules usually are.
 */
function applyCap(
  layers: readonly ReadLayer[],
  maxBytes: number,
  warnings: string[],
): Array<{ layer: ReadLayer; content: string; cutFrom?: number }> {
  let remaining = maxBytes;
  const result: Array<{ layer: ReadLayer; content: string; cutFrom?: number }> = [];
  for (const layer of [...layers].reverse()) {
    const size = byteLength(layer.content);
    if (size <= remaining) {
      result.unshift({ layer, content: layer.content });
      remaining -= size;
      continue;
    }
    const content = cutToBytes(layer.content, remaining);
    remaining = 0;
    warnings.push(
      content
        ? `guidelines exceed ${maxBytes} bytes: ${layer.candidate.label} cut to ${byteLength(content)} of ${size} bytes`
        : `guidelines exceed ${maxBytes} bytes: ${layer.candidate.label} (${size} bytes) left out`,
    );
    // A layer left out entirely is still reported (bytes 0), so the caller sees it exists; it adds no block.
    result.unshift({ layer, content, cutFrom: size });
  }
  return result;
}

/** The longest prefix within `max` bytes, ending at a line break when there is one, never inside a character. */
function cutToBytes(text: string, max: number): string {
  if (max <= 0) return '';
  const buffer = Buffer.from(text, 'utf8');
  const end = cutPoint(buffer, max);
  const prefix = buffer.subarray(0, end).toString('utf8');
  if (buffer[end] === 0x0a) return prefix.trimEnd();
  const lastBreak = prefix.lastIndexOf('\n');
  return (lastBreak > 0 ? prefix.slice(0, lastBreak) : prefix).trimEnd();
}

/** A byte offset at or below `max` that does not split a UTF-8 sequence. */
function cutPoint(buffer: Buffer, max: number): number {
  let end = Math.min(max, buffer.length);
  if (end === buffer.length) return end;
  while (end > 0 && ((buffer[end] ?? 0) & 0xc0) === 0x80) end--;
  return end;
}

function byteLength(text: string): number {
  return Buffer.byteLength(text, 'utf8');
}

function escapeAttribute(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A file that writes `</guidelines>` must not end its block early and have what follows read as another source. */
function neutralizeClosingTag(content: string): string {
  return content.replace(/<\/(guidelines)/gi, '<\\/$1');
}
