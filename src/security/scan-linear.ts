/**
 * What keeps the poisoning scanner (scan.ts) linear where its old regular expressions were not: JavaScript's
 * backtrack, and have no atomic groups. Hand-written scans stand for the expressions that no rewrite makes linear,
 * and a few rewritten expressions go with the code that combines them. Each says which expression it stands for
 * and why that one was quadratic. They find what it found, exactly: test/fuzz/scanner.fuzz.test.ts holds each to
 * the old expression on short texts, where the old cost is no matter. ScanWork counts what a scan reads.
 */

/**
 * The work of a scan: every pattern run and every hand-written loop is counted as one pass over the text it is
 * handed. Each pass is linear in its text (the cost rule in scan.ts), so `chars` is what the scan costs, up to a
 * constant: a check that rescans the text once per match shows here as growing faster than the text.
 */
export interface ScanWork {
  passes: number;
  chars: number;
}

/** Counts what a scan reads into `ScanOptions.work`, when given. */
export class ScanMeter {
  readonly #work: ScanWork | undefined;

  constructor(work: ScanWork | undefined) {
    this.#work = work;
  }

  /** `text`, counted as one pass over it. */
  read(text: string): string {
    if (this.#work) {
      this.#work.passes++;
      this.#work.chars += text.length;
    }
    return text;
  }
}

/** The zero-width and filler characters (all in the BMP): a loop over char codes, not a match object each. */
const ZERO_WIDTH = new Set([
  0x200b, 0x200c, 0x200d, 0x2060, 0x2061, 0x2062, 0x2063, 0x2064, 0x180e, 0xfeff, 0xad, 0x34f, 0x115f, 0x1160,
  0x3164, 0xffa0,
]);
const SHAPING_RE =
  /[\p{Extended_Pictographic}\p{Script=Devanagari}\p{Script=Bengali}\p{Script=Arabic}\p{Script=Malayalam}\p{Script=Tamil}\p{Script=Sinhala}]/u;

/** The zero-width fillers of `text`: how many, the first and last, and whether one sits inside a word. */
export function zeroWidthFillers(text: string): {
  count: number;
  first: number;
  last: number;
  insideWord: boolean;
} {
  const out = { count: 0, first: -1, last: -1, insideWord: false };
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0xad || !ZERO_WIDTH.has(code)) continue;
    // A ZWJ or ZWNJ between emoji or within Indic/Arabic script is ordinary text shaping, not hiding.
    if ((code === 0x200d || code === 0x200c) && SHAPING_RE.test(text.slice(Math.max(0, i - 2), i + 3)))
      continue;
    if (out.count === 0) out.first = i;
    out.last = i;
    out.count++;
    if (!out.insideWord && WORD_RE.test(text[i - 1] ?? '') && WORD_RE.test(text[i + 1] ?? ''))
      out.insideWord = true;
  }
  return out;
}

const WORD_RE = /\w/;

/**
 * Terminal escape sequences, leftmost first, as the pattern `\x1B\[[0-9;?]*[A-Za-z]|\x1B\][^\x07]*\x07` finds
 * them. Hand-written because that pattern reads to the end of the text from every `ESC ]` that no BEL follows:
 * quadratic on a run of them. Here the next BEL is looked up once and kept until the scan passes it.
 */
export function ansiSequences(text: string): Array<{ start: number; end: number }> {
  const out: Array<{ start: number; end: number }> = [];
  let bel = -2; // the first BEL at or after the last lookup; -1: none left, -2: not looked up yet
  for (let at = text.indexOf('\u001B'); at >= 0; at = text.indexOf('\u001B', at)) {
    const kind = text[at + 1];
    let end = -1;
    if (kind === '[') {
      let i = at + 2;
      while (i < text.length && /[0-9;?]/.test(text[i]!)) i++;
      if (i < text.length && /[A-Za-z]/.test(text[i]!)) end = i + 1;
    } else if (kind === ']') {
      if (bel !== -1 && bel < at + 2) bel = text.indexOf('\u0007', at + 2);
      if (bel >= 0) end = bel + 1;
    }
    if (end >= 0) out.push({ start: at, end });
    at = end >= 0 ? end : at + 1;
  }
  return out;
}

export function withoutAnsi(text: string): string {
  if (!text.includes('\u001B')) return text;
  let out = '';
  let last = 0;
  for (const { start, end } of ansiSequences(text)) {
    out += text.slice(last, start);
    last = end;
  }
  return out + text.slice(last);
}

const SPACE_RE = /\s/;
const LINE_BREAK_RE = /[\n\r\u2028\u2029]/;
const CHAT_TOKEN_RE =
  /<\|(?:im_start|im_end|system|endoftext|start_header_id)\|>|\[\/?(?:INST|SYSTEM)\]|<\/?(?:system|sys)>/i;
const ROLE_HEADING_RE = /(?<!#)#{2,}\s*(?:system|assistant)\s*(?:(?:message|prompt)\s*)?:/gi;

/**
 * Chat-template or system-message markup: the first match of
 * `<\|(?:im_start|...)\|>|\[\/?(?:INST|SYSTEM)\]|<\/?(?:system|sys)>|^\s*#{2,}\s*(?:system|assistant)\s*(?:message|prompt)?\s*:`
 * under the i and m flags. The heading part was quadratic twice over: `^\s*` under the m flag started at every
 * line of a run of blank lines and read the run to its end, and `\s*(?:message|prompt)?\s*` split every run of
 * whitespace after `system` both ways. Here the hashes are found first (ROLE_HEADING_RE, each `##` run once), and
 * the whitespace before them is walked back to the first line start it reaches, where the old match began.
 */
export function chatMarkup(body: string, meter: ScanMeter): string | undefined {
  const token = CHAT_TOKEN_RE.exec(meter.read(body));
  for (const m of meter.read(body).matchAll(ROLE_HEADING_RE)) {
    if (token && token.index < m.index) break;
    // The whitespace before the hashes belongs to this candidate alone (a non-space ends it): linear overall.
    let from = m.index;
    while (from > 0 && SPACE_RE.test(body[from - 1]!)) from--;
    let start = from === 0 ? 0 : -1;
    for (let i = from; start < 0 && i < m.index; i++) if (LINE_BREAK_RE.test(body[i]!)) start = i + 1;
    if (start >= 0) return body.slice(start, m.index + m[0].length);
  }
  return token?.[0];
}

/**
 * A template for the model to fill in a URL: `?q={...}`, `?q=<...>`, `?q=${x}`, `/{id}`. The query forms with
 * braces or angle brackets (`[?&]name=\{\{?[^}]*\}` and `=<[^>]+>`) are not in the pattern: from every `?a={` of
 * `?a={?a={...` it read to the end looking for a `}`. They match exactly when such a character follows at all,
 * which urlTemplate checks once per URL.
 */
const URL_TEMPLATE_RE =
  /[?&][\w.-]+=(?:\$\{?[\w.]+\}?|%[A-Z_]+%|\[[A-Z_ ]+\])|\/(?:\{\{?[^}/]*\}\}?|<[^>/]+>|\$\{?[\w.]+\}?)/i;
const QUERY_OPENING_RE = /[?&][\w.-]+=([{<])/g;

/** Whether `url` holds a template for the model to fill (see URL_TEMPLATE_RE). */
export function urlTemplate(url: string): boolean {
  if (URL_TEMPLATE_RE.test(url)) return true;
  const lastBrace = url.lastIndexOf('}');
  const lastAngle = url.lastIndexOf('>');
  for (const m of url.matchAll(QUERY_OPENING_RE)) {
    const at = m.index + m[0].length;
    if (m[1] === '{' ? lastBrace >= at : url[at] !== undefined && url[at] !== '>' && lastAngle > at)
      return true;
  }
  return false;
}

/** `text` without the characters of `chars` at its end (a loop: `[.,;:!?]+$` is quadratic on a run of dots). */
export function trimEnd(text: string, chars: string): string {
  let end = text.length;
  while (end > 0 && chars.includes(text[end - 1]!)) end--;
  return text.slice(0, end);
}

/**
 * A long run of whitespace that pushes text out of view, as `[ \t\u00A0\u2000-\u200A\u3000]{40,}(?=\S)` or
 * `(?:[ \t]*\r?\n){8,}(?=\S)`. Each was tried from every position of a run, and read to its end: quadratic on a
 * run followed by more whitespace. The lookbehinds let only the first position of a run (or of a stretch of blank
 * lines) start, which is where the first match begins anyway; the earlier of the two matches is the one reported.
 */
const SPACE_RUN_RE = /(?<![ \t\u00A0\u2000-\u200A\u3000])[ \t\u00A0\u2000-\u200A\u3000]{40,}(?=\S)/;
const BLANK_LINES_RE = /(?<![ \t\n])(?!(?<=\r)\n)(?:[ \t]*\r?\n){8,}(?=\S)/;

/** The first long run of whitespace followed by text (see SPACE_RUN_RE), or undefined. */
export function pushingWhitespace(text: string, meter: ScanMeter): string | undefined {
  const spaces = SPACE_RUN_RE.exec(meter.read(text));
  const lines = BLANK_LINES_RE.exec(meter.read(text));
  return (spaces && (!lines || spaces.index < lines.index) ? spaces : lines)?.[0];
}

/** The start of the sentence around `index`: after the last `. ` within 100 characters before it. */
export function sentenceStart(body: string, index: number): number {
  // Only the 101 characters before the match can hold a `. ` that matters: searching the whole text back from
  // every match was quadratic (`.ssh .ssh .ssh ...` has none).
  const from = Math.max(0, index - 101);
  const window = body.slice(from, Math.max(index - 1, 0) + 2);
  const dot = window.lastIndexOf('. ');
  return Math.max(dot < 0 ? -1 : from + dot + 1, index - 100, 0);
}

/** The end of the sentence after `end`: at the next `. `, or 100 characters on. */
export function sentenceEnd(body: string, end: number): number {
  const dot = body.slice(end, end + 102).indexOf('. ');
  return dot < 0 ? Math.min(body.length, end + 100) : end + dot;
}

/** Known servers by lower-case name, with the bounds of a mention: built once per list. */
interface ServerNames {
  byName: Map<string, string>;
  /** The longest name, in characters and in whitespace-separated words. */
  maxChars: number;
  maxWords: number;
}

const serverNamesCache = new WeakMap<readonly string[], ServerNames>();

/** Server names longer than this are never looked for in prose (a name is a label, not a paragraph). */
const MAX_SERVER_NAME = 128;
const MAX_SERVER_WORDS = 8;

function serverNames(servers: readonly string[]): ServerNames {
  let names = serverNamesCache.get(servers);
  if (!names) {
    names = { byName: new Map(), maxChars: 0, maxWords: 0 };
    for (const server of servers) {
      const name = server.trim().toLowerCase();
      const words = name.split(/\s+/).length;
      if (!name || name.length > MAX_SERVER_NAME || words > MAX_SERVER_WORDS) continue;
      names.byName.set(name, server);
      names.maxChars = Math.max(names.maxChars, name.length);
      names.maxWords = Math.max(names.maxWords, words);
    }
    serverNamesCache.set(servers, names);
  }
  return names;
}

const QUOTES = /^[`'"]+|[`'"]+$/g;
const WORD_CHAR = /\w/;

/**
 * The known servers `text` names as `mcp__<server>__` or `the <server> [mcp] server` (case-insensitive), each once,
 * in order of first mention. Linear in the text whatever the number of servers: the text's candidate spans are
 * looked up in a map of the names, where one regular expression per server made a catalog review quadratic (every
 * definition times every server). Each candidate is at most the longest name's words and characters.
 */
export function serverMentions(
  text: string,
  servers: readonly string[],
  meter: ScanMeter,
): Array<{ server: string; match: string }> {
  const names = serverNames(servers);
  const out: Array<{ server: string; match: string }> = [];
  if (names.byName.size === 0) return out;
  const found = new Set<string>();
  const hit = (candidate: string, match: string) => {
    const server = names.byName.get(candidate.toLowerCase());
    if (server === undefined || found.has(server)) return;
    found.add(server);
    out.push({ server, match });
  };
  const body = meter.read(text);
  // `mcp__<server>__`: the name runs to the next `__` (a server name never holds one: the config forbids it, and
  // in this form it could not be told apart), within the longest name's length and before any whitespace.
  for (const m of body.matchAll(/mcp__([^\s_]|_(?!_))+__/gi)) {
    if (m[0].length - 7 <= names.maxChars) hit(m[0].slice(5, -2), m[0]);
  }
  // `the <server> [mcp] server`: the text's words once, then a few words back from each `server`.
  const words = Array.from(body.matchAll(/\S+/g), (w) => ({ at: w.index, text: w[0] }));
  words.forEach((word, i) => {
    const lower = word.text.toLowerCase();
    if (!lower.startsWith('server') || WORD_CHAR.test(lower.charAt(6))) return;
    for (const last of [i - 1, i - 2]) {
      // `the github mcp server`: the name may end before an `mcp`.
      if (last === i - 2 && words[i - 1]?.text.toLowerCase() !== 'mcp') break;
      for (let first = last; first >= 1 && last - first < names.maxWords; first--) {
        const the = words[first - 1]!.text.toLowerCase();
        if (!the.endsWith('the') || WORD_CHAR.test(the.charAt(the.length - 4))) continue;
        const span = words
          .slice(first, last + 1)
          .map((w) => w.text)
          .join(' ');
        if (span.length > names.maxChars + 4) break;
        hit(span.replace(QUOTES, ''), body.slice(words[first - 1]!.at, word.at + 6));
      }
    }
  });
  return out;
}
