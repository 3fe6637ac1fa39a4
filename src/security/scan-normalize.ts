/**
 * What the poisoning scanner (scan.ts) and the evidence extractor (evidence.ts) both do to untrusted text before
 * they read it or show it: invisible characters removed or shown, NFKC, whitespace collapsed, matches clipped.
 * Apart from scan.ts so that evidence.ts can use them without importing the scanner.
 */
import { withoutAnsi } from './scan-linear.js';

// Built from strings: the linter rightly objects to ZWJ and control characters in regex literals elsewhere, but
// matching exactly those characters is this module's job.
const re = (source: string, flags = 'gu'): RegExp => new RegExp(source, flags);

export const INVISIBLE_SOURCE = String.raw`[\u{E0000}-\u{E007F}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u200B\u200C\u200D\u2060-\u2064\u180E\uFEFF\u00AD\u034F\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069\u200E\u200F\u061C]`;
const INVISIBLE_RE = re(INVISIBLE_SOURCE);
const SHOWN_RE = re(
  String.raw`[\u{E0000}-\u{E007F}\u{FE00}-\u{FE0F}\u{E0100}-\u{E01EF}\u200B-\u200F\u2060-\u2064\u180E\uFEFF\u00AD\u034F\u115F\u1160\u3164\uFFA0\u202A-\u202E\u2066-\u2069\u061C\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F]`,
);

/** Shows what a reviewer cannot see: every invisible or control character becomes `\u{...}`. */
export function showInvisible(text: string): string {
  return text.replace(SHOWN_RE, (ch) => `\\u{${ch.codePointAt(0)!.toString(16).toUpperCase()}}`);
}

const MAX_MATCH = 200;

/** At most MAX_MATCH characters of `text` as a reviewer should see them (invisible characters shown). */
export function clip(text: string): string {
  // Each character shows as one or more: the first MAX_MATCH + 1 decide what is shown (the +1 keeps a surrogate
  // pair whole), so a match of a megabyte is not escaped whole to show 200 characters of it.
  const shown = showInvisible(text.length > MAX_MATCH + 1 ? text.slice(0, MAX_MATCH + 1) : text);
  return shown.length > MAX_MATCH ? `${shown.slice(0, MAX_MATCH)}…` : shown;
}

/**
 * Invisible characters and escapes removed, NFKC, runs of spaces and tabs made one space. NFKC can expand a
 * character 18 times (U+FDFA): past `max` characters of its output the rest is dropped (`cut` is told how long
 * it was), before the rest of the work. Only runs that change are replaced (`[ \t]{2,}|\t`, not `[ \t]+`): a
 * text of single spaces is left as it is instead of rebuilt.
 */
export function normalize(
  text: string,
  max = Number.POSITIVE_INFINITY,
  cut?: (length: number) => void,
): string {
  const nfkc = withoutAnsi(text).replace(INVISIBLE_RE, '').normalize('NFKC');
  if (nfkc.length > max) cut?.(nfkc.length);
  return (nfkc.length > max ? nfkc.slice(0, max) : nfkc).replace(/[ \t]{2,}|\t/g, ' ');
}
