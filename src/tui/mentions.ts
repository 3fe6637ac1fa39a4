import { readdirSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { MAX_ATTACHMENT_CHARS, MAX_ATTACHMENTS } from '../mcp/attachments.js';

/** Files attached per message, and characters read of each: a mention never floods the context. */
export const MAX_MENTIONS = MAX_ATTACHMENTS;
export const MAX_MENTION_CHARS = MAX_ATTACHMENT_CHARS;
/** Completion lists at most this many entries of a folder. */
export const MAX_COMPLETIONS = 200;

/** `@path` completions under `cwd` (folders end with `/`), never outside it. */
export function completeMention(word: string, cwd: string): string[] {
  if (!word.startsWith('@')) return [];
  const typed = word.slice(1);
  const slash = typed.lastIndexOf('/');
  const dirPart = slash >= 0 ? typed.slice(0, slash + 1) : '';
  const prefix = slash >= 0 ? typed.slice(slash + 1) : typed;
  const dir = resolve(cwd, dirPart);
  if (!inside(cwd, dir)) return [];
  let entries: import('node:fs').Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const entry of entries) {
    if (out.length >= MAX_COMPLETIONS) break;
    if (!entry.name.startsWith(prefix)) continue;
    if (entry.name.startsWith('.') && !prefix.startsWith('.')) continue;
    if (entry.name === 'node_modules' && prefix === '') continue;
    out.push(`@${dirPart}${entry.name}${entry.isDirectory() ? '/' : ''}`);
  }
  return out.sort();
}

/** The longest prefix all completions share (what Tab fills in when there are several). */
export function commonPrefix(words: readonly string[]): string {
  if (words.length === 0) return '';
  let prefix = words[0]!;
  for (const word of words) while (!word.startsWith(prefix)) prefix = prefix.slice(0, -1);
  return prefix;
}

/**
 * The message with the files it mentions (`@path`, inside `cwd`) attached after it, each cut at
 * MAX_MENTION_CHARS; the notes say what was attached or why not.
 */
export function attachMentions(message: string, cwd: string): { text: string; notes: string[] } {
  const { parts, notes } = fileAttachments(message, cwd);
  return { text: parts.length > 0 ? `${message}\n\n${parts.join('\n\n')}` : message, notes };
}

/**
 * The files `message` mentions as attachments (at most `max`), without the message; `skip` leaves out what is
 * not a file (`@server:uri`, a resource).
 */
export function fileAttachments(
  message: string,
  cwd: string,
  options: { max?: number; skip?: (mention: string) => boolean } = {},
): { parts: string[]; notes: string[] } {
  const max = options.max ?? MAX_MENTIONS;
  const notes: string[] = [];
  const seen = new Set<string>();
  const parts: string[] = [];
  for (const match of message.matchAll(/(?:^|\s)@([^\s]+)/g)) {
    const path = match[1]!.replace(/[.,;:!?)]+$/, '');
    if (seen.has(path) || options.skip?.(path)) continue;
    seen.add(path);
    if (parts.length >= max) {
      notes.push(`@${path} not attached: at most ${max} files per message`);
      continue;
    }
    const file = resolve(cwd, path);
    if (isAbsolute(path) || !inside(cwd, file)) {
      notes.push(`@${path} not attached: only files inside ${cwd}`);
      continue;
    }
    try {
      if (!statSync(file).isFile()) continue;
      const text = readFileSync(file, 'utf8');
      const cut = text.length > MAX_MENTION_CHARS;
      parts.push(
        `<file path="${relative(cwd, file)}"${cut ? ` cut_at="${MAX_MENTION_CHARS}"` : ''}>\n${cut ? text.slice(0, MAX_MENTION_CHARS) : text}\n</file>`,
      );
      notes.push(`attached ${relative(cwd, file)}${cut ? ` (first ${MAX_MENTION_CHARS} characters)` : ''}`);
    } catch {
      // Not a file (an e-mail address, a handle): left as typed.
    }
  }
  return { parts, notes };
}

function inside(root: string, path: string): boolean {
  const rel = relative(resolve(root), path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
