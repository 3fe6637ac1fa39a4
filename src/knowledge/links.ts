/**
 * Markdown links in a concept body (§6.1): inline `[text](target)` and `![alt](target)`, and reference
 * definitions `[label]: target`, with the destination forms CommonMark allows (`<with spaces>`, balanced
 * parentheses, backslash escapes, a title in "", '' or ()). Code is skipped (fenced blocks, indented blocks,
 * code spans of any backtick length), and so are HTML comments, escaped brackets and footnotes (`[^id]`), which
 * join into `sources` rather than link (§5.1).
 *
 * Hand-written rather than a Markdown parser: the link grammar needed here is small, and a full parser would cost
 * more than the rest of the loader. Every scan is linear in the body (a destination or title is read at most
 * MAX_DESTINATION characters far): the inline scan walks the text once with a stack of open brackets, and the
 * regular expressions left are anchored ones that cannot backtrack far, so a hostile file cannot make loading
 * quadratic (the regular expression this replaced took over a minute on 200 KB of `[a](`).
 */
export interface BodyLink {
  /** The destination, backslash escapes removed; %-escapes stay as written. */
  target: string;
  text: string;
  /** 1-based line in the body. */
  line: number;
  /** Offsets of the destination as written in the body (inside `<...>` when so written), end exclusive. */
  start: number;
  end: number;
}

export interface FootnoteRef {
  label: string;
  /** 1-based line in the body. */
  line: number;
}

/** Longer destinations and titles are not read as links: real paths are far shorter. */
const MAX_DESTINATION = 1024;
/** cmark's limit on nested parentheses in a destination. */
const MAX_PAREN_DEPTH = 32;

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;
const LIST_ITEM = /^ {0,3}([-+*]|\d{1,9}[.)])(\s|$)/;
const ATX_HEADING = /^ {0,3}#{1,6}(\s|$)/;
const REFERENCE =
  /^ {0,3}\[((?:[^\]\\]|\\.)+)\]:[ \t]*(?:<((?:[^<>\n\\]|\\.)*)>|(\S+))(?:[ \t]+(?:"[^"]*"|'[^']*'|\([^)]*\)))?[ \t]*$/;
const FOOTNOTE_DEFINITION = /^ {0,3}\[\^[^\]\s]+\]:/;

/**
 * An ATX heading line (`## Text ##`): its level and text, trimmed, without the closing run of #s (which needs a
 * space before it: `# C#` is about C#). Scanned by hand: the `^#{1,6}\s+(.*?)\s*#*\s*$` pattern it replaces
 * backtracks cubically, so one heading with a few thousand spaces in it stalled loading for hours.
 */
export function atxHeading(line: string): { level: number; text: string } | undefined {
  let i = 0;
  while (i < 3 && line[i] === ' ') i++;
  let level = 0;
  while (line[i + level] === '#') level++;
  if (level < 1 || level > 6) return undefined;
  const after = line[i + level];
  if (after !== undefined && after !== ' ' && after !== '\t') return undefined;
  let text = line.slice(i + level).trim();
  let end = text.length;
  while (end > 0 && text[end - 1] === '#') end--;
  if (end === 0) text = '';
  else if (end < text.length && (text[end - 1] === ' ' || text[end - 1] === '\t'))
    text = text.slice(0, end).trim();
  return { level, text };
}

/** Which lines of `body` are code: fenced blocks with their fences, and indented code blocks. */
export function codeLines(body: string): boolean[] {
  return classify(body.split('\n')).map((kind) => kind !== 'text');
}

export function bodyLinks(body: string): BodyLink[] {
  return scanBody(body).links;
}

/** Footnote references `[^id]` outside code (not the `[^id]: ...` definitions): they join into sources[].id. */
export function footnoteRefs(body: string): FootnoteRef[] {
  return scanBody(body).footnotes;
}

/** Backslash escapes of ASCII punctuation, as CommonMark removes them from a destination. */
function unescapeDestination(text: string): string {
  return text.replace(/\\([!-/:-@[-`{-~])/g, '$1');
}

type LineKind = 'text' | 'fence' | 'indented';

function indentOf(line: string): number {
  let width = 0;
  for (const c of line) {
    if (c === ' ') width++;
    else if (c === '\t') width += 4 - (width % 4);
    else break;
  }
  return width;
}

/**
 * Fenced code (``` or ~~~, closed by a fence of the same character at least as long) and indented code (four
 * columns, after a blank line or a heading, outside a list, where indentation is the item's content). A fence
 * inside a list item may be indented further than three spaces.
 */
function classify(lines: readonly string[]): LineKind[] {
  const kinds: LineKind[] = [];
  let fence: string | undefined;
  let fenceIndent = 0;
  let inList = false;
  let previous: 'blank' | 'heading' | 'code' | 'text' = 'blank';
  for (const line of lines) {
    const blank = line.trim() === '';
    if (fence !== undefined) {
      kinds.push('fence');
      const close = FENCE.exec(line);
      if (
        close &&
        close[2]![0] === fence[0] &&
        close[2]!.length >= fence.length &&
        close[3]!.trim() === '' &&
        indentOf(line) < fenceIndent + 4
      )
        fence = undefined;
      continue;
    }
    const indent = indentOf(line);
    const open = FENCE.exec(line);
    if (open && (indent <= 3 || inList) && !(open[2]![0] === '`' && open[3]!.includes('`'))) {
      fence = open[2]!;
      fenceIndent = indent;
      kinds.push('fence');
      previous = 'blank';
      continue;
    }
    if (!blank && indent >= 4 && !inList && previous !== 'text') {
      kinds.push('indented');
      previous = 'code';
      continue;
    }
    kinds.push('text');
    if (blank) {
      if (previous !== 'code') previous = 'blank';
      continue;
    }
    if (LIST_ITEM.test(line)) inList = true;
    else if (indent === 0) inList = false;
    previous = ATX_HEADING.test(line) ? 'heading' : 'text';
  }
  return kinds;
}

/** `body` with code, reference definitions and HTML comments blanked (same length, newlines kept). */
function prose(lines: readonly string[], kinds: readonly LineKind[]): string {
  const parts: string[] = [];
  lines.forEach((line, i) => {
    parts.push(kinds[i] === 'text' ? line : ' '.repeat(line.length));
  });
  const text = parts.join('\n');
  const ranges: Array<[number, number]> = [];
  // Code spans and comments do not cross a blank line, so each paragraph is read on its own.
  let start = 0;
  for (const paragraph of text.split(/(\n[ \t]*\n)/)) {
    spansAndComments(paragraph, start, ranges);
    start += paragraph.length;
  }
  if (ranges.length === 0) return text;
  const out: string[] = [];
  let from = 0;
  for (const [a, b] of ranges) {
    out.push(text.slice(from, a), text.slice(a, b).replace(/[^\n]/g, ' '));
    from = b;
  }
  out.push(text.slice(from));
  return out.join('');
}

/**
 * Code spans: a run of N backticks up to the next run of exactly N (a run after a backslash is literal).
 * Comments: `<!--` to `-->`. Whichever opens first wins, as in CommonMark. Linear: each run's next run of the
 * same length is found from a table built back to front. Adds the ranges to blank, in order, to `ranges`.
 */
function spansAndComments(text: string, offset: number, ranges: Array<[number, number]>): void {
  const runs: Array<{ start: number; length: number }> = [];
  for (let i = text.indexOf('`'); i !== -1; i = text.indexOf('`', i)) {
    let j = i;
    while (text[j] === '`') j++;
    if (text[i - 1] !== '\\') runs.push({ start: i, length: j - i });
    i = j;
  }
  const nextSame = new Array<number>(runs.length).fill(-1);
  const lastByLength = new Map<number, number>();
  for (let r = runs.length - 1; r >= 0; r--) {
    nextSame[r] = lastByLength.get(runs[r]!.length) ?? -1;
    lastByLength.set(runs[r]!.length, r);
  }
  let r = 0;
  let i = 0;
  let comment = text.indexOf('<!--');
  while (i < text.length) {
    if (comment !== -1 && comment < i) comment = text.indexOf('<!--', i);
    while (r < runs.length && runs[r]!.start < i) r++;
    const span = r < runs.length ? runs[r]! : undefined;
    if (comment !== -1 && (span === undefined || comment < span.start)) {
      const close = text.indexOf('-->', comment + 4);
      const end = close === -1 ? text.length : close + 3;
      ranges.push([offset + comment, offset + end]);
      i = end;
      continue;
    }
    if (span === undefined) return;
    const closing = nextSame[r]!;
    if (closing === -1) {
      i = span.start + span.length;
      continue;
    }
    const end = runs[closing]!.start + runs[closing]!.length;
    ranges.push([offset + span.start, offset + end]);
    i = end;
  }
}

interface Opener {
  at: number;
  image: boolean;
  /** Order of opening: a link closing makes every link opener opened before it inactive. */
  seq: number;
}

/** The links and the footnote references of a body, in one pass. */
export function scanBody(body: string): { links: BodyLink[]; footnotes: FootnoteRef[] } {
  const lines = body.split('\n');
  const kinds = classify(lines);
  const lineStarts: number[] = [];
  let offset = 0;
  for (const line of lines) {
    lineStarts.push(offset);
    offset += line.length + 1;
  }
  const links: BodyLink[] = [];
  const footnotes: FootnoteRef[] = [];

  // Reference definitions are whole lines; they are taken out of the text the inline scan reads.
  const definitionLines = new Set<number>();
  lines.forEach((line, i) => {
    if (kinds[i] !== 'text') return;
    const definition = REFERENCE.exec(line);
    if (!definition || definition[1]!.startsWith('^')) return;
    const angle = definition[2] !== undefined;
    const written = angle ? definition[2]! : definition[3]!;
    const at =
      lineStarts[i]! + line.indexOf(angle ? `<${written}>` : written, line.indexOf(']:')) + (angle ? 1 : 0);
    if (written !== '')
      links.push({
        target: unescapeDestination(written),
        text: definition[1]!,
        line: i + 1,
        start: at,
        end: at + written.length,
      });
    definitionLines.add(i);
  });
  const masked = prose(
    lines,
    kinds.map((k, i) => (definitionLines.has(i) ? 'fence' : k)),
  );

  let lineIndex = 0;
  const lineOf = (at: number): number => {
    while (lineIndex + 1 < lineStarts.length && lineStarts[lineIndex + 1]! <= at) lineIndex++;
    while (lineIndex > 0 && lineStarts[lineIndex]! > at) lineIndex--;
    return lineIndex + 1;
  };

  let openers: Opener[] = [];
  let seq = 0;
  let inactiveBefore = 0;
  const n = masked.length;
  const special = /[\\\n[\]]/g;
  for (let i = 0; i < n; i++) {
    special.lastIndex = i;
    const next = special.exec(masked);
    if (!next) break;
    i = next.index;
    const c = masked[i]!;
    if (c === '\\') {
      i++;
      continue;
    }
    if (c === '\n') {
      // A blank line ends the paragraph: no link text spans it.
      let j = i + 1;
      while (masked[j] === ' ' || masked[j] === '\t') j++;
      if (masked[j] === '\n' || j >= n) openers = [];
      continue;
    }
    if (c === '[') {
      openers.push({ at: i, image: masked[i - 1] === '!' && masked[i - 2] !== '\\', seq: seq++ });
      continue;
    }
    if (c !== ']') continue;
    const opener = openers.pop();
    if (!opener || (!opener.image && opener.seq < inactiveBefore)) continue;
    if (masked[opener.at + 1] === '^') {
      const label = masked.slice(opener.at + 2, i);
      const atLineStart = FOOTNOTE_DEFINITION.test(masked.slice(lineStarts[lineOf(opener.at) - 1]!, i + 2));
      if (label !== '' && !/\s/.test(label) && !(masked[i + 1] === ':' && atLineStart))
        footnotes.push({ label, line: lineOf(opener.at) });
      continue;
    }
    if (masked[i + 1] !== '(') continue;
    const destination = readDestination(masked, i + 2);
    if (!destination) continue;
    if (destination.written !== '')
      links.push({
        target: unescapeDestination(destination.written),
        text: body.slice(opener.at + 1, i).trim(),
        line: lineOf(destination.start),
        start: destination.start,
        end: destination.start + destination.written.length,
      });
    // Links do not contain links: the brackets still open around this one are text (images may hold links).
    if (!opener.image) inactiveBefore = seq;
    i = destination.close;
  }
  links.sort((a, b) => a.start - b.start);
  return { links, footnotes };
}

/**
 * The destination (and optional title) of an inline link whose `(` is just before `from`, up to its `)`; undefined
 * when this is not one.
 */
function readDestination(
  text: string,
  from: number,
): { written: string; start: number; close: number } | undefined {
  let i = skipSpace(text, from);
  let written: string;
  let start: number;
  if (text[i] === '<') {
    start = i + 1;
    let j = start;
    while (j < text.length && j - start <= MAX_DESTINATION && text[j] !== '>') {
      if (text[j] === '\n' || text[j] === '<') return undefined;
      j += text[j] === '\\' ? 2 : 1;
    }
    if (text[j] !== '>') return undefined;
    written = text.slice(start, j);
    i = j + 1;
  } else {
    start = i;
    let depth = 0;
    let j = i;
    for (; j < text.length && j - start <= MAX_DESTINATION; j++) {
      const c = text[j]!;
      if (c === '\\') {
        j++;
        continue;
      }
      if (c <= ' ') break;
      if (c === '(') {
        if (++depth > MAX_PAREN_DEPTH) return undefined;
      } else if (c === ')') {
        if (depth === 0) break;
        depth--;
      }
    }
    if (depth !== 0 || j - start > MAX_DESTINATION) return undefined;
    written = text.slice(start, j);
    i = j;
  }
  const afterDestination = i;
  i = skipSpace(text, i);
  const quote = text[i];
  if (i > afterDestination && (quote === '"' || quote === "'" || quote === '(')) {
    const closer = quote === '(' ? ')' : quote;
    let j = i + 1;
    while (j < text.length && j - i <= MAX_DESTINATION && text[j] !== closer) {
      if (quote === '(' && text[j] === '(') return undefined;
      j += text[j] === '\\' ? 2 : 1;
    }
    if (text[j] !== closer) return undefined;
    i = skipSpace(text, j + 1);
  }
  return text[i] === ')' ? { written, start, close: i } : undefined;
}

/** Spaces and tabs, and at most one line break. */
function skipSpace(text: string, from: number): number {
  let i = from;
  let breaks = 0;
  while (i < text.length) {
    const c = text[i];
    if (c === '\n' && breaks++ === 0) i++;
    else if (c === ' ' || c === '\t') i++;
    else break;
  }
  return i;
}
