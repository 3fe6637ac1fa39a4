import { readdirSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileAttachments } from '../agent/file-mentions.js';
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

function inside(root: string, path: string): boolean {
  const rel = relative(resolve(root), path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}
