import { readFileSync, statSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { enclosed, MAX_ATTACHMENT_CHARS, MAX_ATTACHMENTS } from '../mcp/attachments.js';

/**
 * The files `message` mentions (`@path`, inside `cwd` only, each cut at MAX_ATTACHMENT_CHARS) as attachments (at
 * most `max`), without the message; `skip` leaves out what is not a file (`@server:uri`, a resource).
 */
export function fileAttachments(
  message: string,
  cwd: string,
  options: { max?: number; skip?: (mention: string) => boolean } = {},
): { parts: string[]; notes: string[] } {
  const max = options.max ?? MAX_ATTACHMENTS;
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
      const cut = text.length > MAX_ATTACHMENT_CHARS;
      parts.push(
        `<file path="${relative(cwd, file)}"${cut ? ` cut_at="${MAX_ATTACHMENT_CHARS}"` : ''}>\n${enclosed('file', cut ? text.slice(0, MAX_ATTACHMENT_CHARS) : text)}\n</file>`,
      );
      notes.push(
        `attached ${relative(cwd, file)}${cut ? ` (first ${MAX_ATTACHMENT_CHARS} characters)` : ''}`,
      );
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
