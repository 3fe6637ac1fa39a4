import { isMap, isScalar, LineCounter, parseDocument, visit } from 'yaml';

/**
 * YAML front matter of a Markdown file (SKILL.md, OKF concepts, docs): a `---` line alone at the top, the YAML,
 * a `---` line alone. Split by lines, not by a search for `---` (which a YAML value may contain); a BOM and CRLF
 * line ends are fine. Parsed with the `yaml` package's core schema, so dates and times stay the strings they were
 * written as. Line numbers are 1-based and refer to the whole file.
 */
export interface FrontMatter {
  /** The parsed mapping; `{}` when there is no front matter or it is not a mapping. */
  data: Record<string, unknown>;
  /** Whether the file opens with front matter at all. */
  present: boolean;
  /** The Markdown after the closing `---` (the whole file when there is no front matter), LF line ends. */
  body: string;
  /** The file line the body starts on. */
  bodyLine: number;
  /** The file line of each top-level key. */
  keyLines: ReadonlyMap<string, number>;
  problems: FrontMatterProblem[];
}

export interface FrontMatterProblem {
  line: number;
  message: string;
  kind: FrontMatterProblemKind;
}

/**
 * `unclosed`: no closing `---`; `yaml`: invalid YAML; `not-mapping`: valid YAML that is not a mapping;
 * `unreadable`: valid YAML that cannot be expanded (an alias bomb); `oversized`: more than MAX_FRONT_MATTER_CHARS.
 */
export type FrontMatterProblemKind = 'unclosed' | 'yaml' | 'not-mapping' | 'unreadable' | 'oversized';

export interface FrontMatterOptions {
  /**
   * Read front matter in the subset of YAML that skills, OKF concepts and docs are written in (`plainYaml`)
   * without the `yaml` package, which is more than half of loading a bundle (profiled on 10,000 concepts) and
   * 20 times slower on 10,000 SKILL.md files (bench/skills.ts). Default true; false always runs the parser
   * (tests hold the two to the same result).
   */
  fastPath?: boolean;
}

/**
 * The most front matter one file may have. Real front matter is a few hundred bytes (a skill's description is
 * at most 1,024 characters); past this the block is reported instead of parsed, so a hostile file costs neither
 * the parser's time nor its memory.
 */
export const MAX_FRONT_MATTER_CHARS = 256 * 1024;
/** Aliases the parser may expand: enough for any honest reuse, far from a billion laughs. */
const MAX_ALIAS_COUNT = 100;

/**
 * The one front matter reader of skills, knowledge and docs. It never throws: the `yaml` package throws (rather
 * than reporting) on an alias bomb (`ReferenceError: Excessive alias count`), and one hostile file must be one
 * invalid file, not a library, a bundle or a server that cannot load. Every step is linear in the text.
 */
export function readFrontMatter(source: string, options: FrontMatterOptions = {}): FrontMatter {
  const { text, lines, close } = split(source);
  if (close === undefined)
    return { data: {}, present: false, body: text, bodyLine: 1, keyLines: new Map(), problems: [] };
  if (close === -1)
    return {
      data: {},
      present: true,
      body: text,
      bodyLine: 1,
      keyLines: new Map(),
      problems: [{ line: 1, message: 'front matter is not closed with a --- line', kind: 'unclosed' }],
    };
  const result = opened(lines, close);
  const yamlText = lines.slice(1, close).join('\n');
  if (yamlText.length > MAX_FRONT_MATTER_CHARS) {
    result.problems.push({
      line: 2,
      message: `front matter is ${yamlText.length} characters; at most ${MAX_FRONT_MATTER_CHARS} are read`,
      kind: 'oversized',
    });
    return result;
  }
  if (options.fastPath !== false) {
    const fast = plainBlock(lines, close);
    if (fast) return { ...result, ...fast };
  }
  try {
    return { ...result, ...parseYaml(yamlText) };
  } catch (error) {
    // parseYaml reports alias bombs itself; this is for whatever else the package may throw one day.
    return {
      ...result,
      problems: [
        { line: 2, message: `the front matter cannot be read: ${messageOf(error)}`, kind: 'unreadable' },
      ],
    };
  }
}

/**
 * plainYaml's reading of a whole file, or undefined when the file's front matter is outside its subset (the
 * parser's business) or absent. readFrontMatter is the reader to use; this is for tests and benchmarks.
 */
export function plainYaml(source: string): FrontMatter | undefined {
  const { lines, close } = split(source);
  if (close === undefined || close === -1) return undefined;
  const fast = plainBlock(lines, close);
  return fast && { ...opened(lines, close), ...fast };
}

/** The text with a BOM and CR line ends gone, its lines, and the index of the closing `---` (-1: none; undefined: no front matter). */
function split(source: string): { text: string; lines: string[]; close: number | undefined } {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  if (lines[0]?.trimEnd() !== '---') return { text, lines, close: undefined };
  return { text, lines, close: lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---') };
}

/** A file with front matter closed at `close`, before its block is read. */
function opened(lines: readonly string[], close: number): FrontMatter {
  return {
    data: {},
    present: true,
    body: lines.slice(close + 1).join('\n'),
    bodyLine: close + 2,
    keyLines: new Map(),
    problems: [],
  };
}

/** The `yaml` package's reading of the block between the markers. Throws on an alias bomb (see readFrontMatter). */
function parseYaml(yamlText: string): Pick<FrontMatter, 'data' | 'keyLines' | 'problems'> {
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const keyLines = new Map<string, number>();
  const problems: FrontMatter['problems'] = [];
  const out = { data: {}, keyLines, problems };
  // Line 1 of the YAML is line 2 of the file.
  const lineOf = (offset: number) => counter.linePos(offset).line + 1;
  // Deep nesting makes the parser report its stack overflow once per level it unwinds: say each thing once.
  const seen = new Set<string>();
  for (const error of doc.errors) {
    const message = `invalid YAML: ${error.message.split('\n')[0]}`;
    if (seen.has(message)) continue;
    seen.add(message);
    problems.push({ line: lineOf(error.pos[0]), message, kind: 'yaml' });
  }
  if (doc.errors.length > 0) return out;
  if (doc.contents === null) return out; // empty front matter: a mapping with nothing in it
  if (!isMap(doc.contents)) {
    problems.push({
      line: 2,
      message: 'front matter must be a YAML mapping (key: value lines)',
      kind: 'not-mapping',
    });
    return out;
  }
  for (const item of doc.contents.items) {
    if (isScalar(item.key) && item.key.range) keyLines.set(String(item.key.value), lineOf(item.key.range[0]));
  }
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (error) {
    let line = 2;
    visit(doc, {
      Alias(_key, node) {
        if (node.range) line = lineOf(node.range[0]);
        return visit.BREAK;
      },
    });
    problems.push({
      line,
      message: `the front matter cannot be read: ${messageOf(error)} (more than ${MAX_ALIAS_COUNT} alias expansions)`,
      kind: 'unreadable',
    });
    return out;
  }
  if (typeof data === 'object' && data !== null && !Array.isArray(data))
    out.data = data as Record<string, unknown>;
  return out;
}

/** Thrown inside plainYaml for anything outside its subset; readFrontMatter then asks the `yaml` package. */
class NotPlain extends Error {}
const notPlain = (): never => {
  throw new NotPlain();
};

/** `key:` and the value after it, trailing spaces included (the value readers skip them). Linear: anchored, no `.*?`. */
const KEY = /^([A-Za-z_][\w-]*):(?: +(.*))?$/;
/** Characters YAML restricts or treats specially: controls (tabs too), BOMs, surrogates, non-characters. */
function unusual(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0xd800 && c <= 0xdfff) || c >= 0xfffe || c === 0xfeff)
      return true;
  }
  return false;
}
/** A first character that makes a YAML scalar anything but a plain string. */
const INDICATOR = /^[-?:,[\]{}#&*!|>'"%@`]/;
/** Plain scalars the core schema types (null, booleans, numbers in any spelling) or that YAML 1.1 would. */
const TYPED =
  /^(~|null|true|false|yes|no|on|off|y|n|[-+]?(\d[\d_]*(\.[\d_]*)?|\.\d[\d_]*)([eE][-+]?\d+)?|0x[\da-fA-F_]+|0o[0-7_]+|0b[01_]+|[-+]?\.(inf|nan))$/i;

/**
 * The block between the markers (`lines` are the file's, LF; `close` indexes the closing `---`) in the subset of
 * YAML that front matter is written in, read without the `yaml` package, or undefined for
 * anything else. The subset: a block mapping of `key: value` lines whose values are plain scalars (strings, the
 * integers 0..10^15, true and false), single- or double-quoted scalars without escapes, flow lists and flow
 * mappings of those, or, on the lines below a bare `key:`, a block list (of those, or of one-level mappings) or a
 * one-level block mapping. Comments, anchors, tags, block scalars, multi-line scalars, escapes, nesting beyond
 * that and every typed spelling other than those are left to the parser. test/knowledge/front-matter.test.ts
 * and test/skills/validate.test.ts hold the result to the `yaml` package's on every input the subset takes.
 */
function plainBlock(
  lines: readonly string[],
  close: number,
): Pick<FrontMatter, 'data' | 'keyLines'> | undefined {
  for (let i = 1; i < close; i++) if (unusual(lines[i]!)) return undefined;
  const data: Record<string, unknown> = Object.create(null);
  const keyLines = new Map<string, number>();
  try {
    let i = 1;
    while (i < close) {
      const line = lines[i]!;
      if (line.trim() === '') {
        i++;
        continue;
      }
      const match = KEY.exec(line);
      if (!match || Object.hasOwn(data, match[1]!) || match[1] === '__proto__') return undefined;
      const key = match[1]!;
      keyLines.set(key, i + 1);
      i++;
      if (match[2] !== undefined) {
        data[key] = inlineValue(match[2]);
        continue;
      }
      const block: string[] = [];
      while (i < close && (lines[i]!.trim() === '' || /^[ -]/.test(lines[i]!))) block.push(lines[i++]!);
      while (block.length > 0 && block.at(-1)!.trim() === '') block.pop();
      data[key] = block.length === 0 ? notPlain() : blockValue(block);
    }
  } catch (error) {
    if (error instanceof NotPlain) return undefined;
    throw error;
  }
  return { data: { ...data }, keyLines };
}

/** A value written on its key's line. */
function inlineValue(written: string): unknown {
  const reader = new Flow(written);
  const value = reader.value(false);
  reader.end();
  return value;
}

/** The lines under a bare `key:`: a block list or a one-level block mapping. */
function blockValue(block: readonly string[]): unknown {
  const first = block[0]!;
  const indent = first.length - first.trimStart().length;
  const prefix = ' '.repeat(indent);
  if (first.slice(indent).startsWith('- ') || first.slice(indent) === '-') {
    const items: unknown[] = [];
    for (let i = 0; i < block.length; ) {
      const line = block[i]!;
      if (line.trim() === '') notPlain();
      if (!line.startsWith(`${prefix}- `)) notPlain();
      const rest = line.slice(indent + 2);
      const entry = KEY.exec(rest);
      i++;
      if (!entry || rest.startsWith('"') || rest.startsWith("'")) {
        items.push(inlineValue(rest));
        continue;
      }
      // `- key: value` and the item's further keys, two columns in.
      const item: Record<string, unknown> = Object.create(null);
      const keyed = [rest];
      while (i < block.length && block[i]!.startsWith(`${prefix}  `) && block[i]!.trim() !== '')
        keyed.push(block[i++]!.slice(indent + 2));
      for (const entryLine of keyed) {
        const m = KEY.exec(entryLine);
        if (!m || m[2] === undefined || Object.hasOwn(item, m[1]!) || m[1] === '__proto__') notPlain();
        item[m![1]!] = inlineValue(m![2]!);
      }
      items.push({ ...item });
    }
    return items;
  }
  if (indent === 0) notPlain();
  const mapping: Record<string, unknown> = Object.create(null);
  for (const line of block) {
    if (!line.startsWith(prefix) || line[indent] === ' ') notPlain();
    const m = KEY.exec(line.slice(indent));
    if (!m || m[2] === undefined || Object.hasOwn(mapping, m[1]!) || m[1] === '__proto__') notPlain();
    mapping[m![1]!] = inlineValue(m![2]!);
  }
  return { ...mapping };
}

/** A flow mapping's key, matched where the cursor is (sticky: never a copy of the rest of the line). */
const FLOW_KEY = /[A-Za-z_][\w-]*/y;
/** Where a plain scalar ends, searched from the cursor (global + lastIndex: never a copy of the rest). */
const PLAIN_STOP_IN_FLOW = /[,[\]{}]|:[ ,[\]{}]|:$| #/g;
const PLAIN_STOP = / #|: |:$/g;

/**
 * A cursor over one line's value: scalars, and flow lists and mappings of scalars. Every step reads from the
 * cursor on, so a line of n items costs O(n), not O(n^2) (each item once copied the rest of the line).
 */
class Flow {
  #at = 0;
  constructor(readonly text: string) {}

  value(inFlow: boolean): unknown {
    this.#skip();
    const c = this.text[this.#at];
    if (c === '[' && !inFlow) return this.#sequence();
    if (c === '{' && !inFlow) return this.#mapping();
    if (c === '"' || c === "'") return this.#quoted(c);
    return this.#plain(inFlow);
  }

  end(): void {
    this.#skip();
    if (this.#at !== this.text.length) notPlain();
  }

  #skip(): void {
    while (this.text[this.#at] === ' ') this.#at++;
  }

  #sequence(): unknown[] {
    this.#at++;
    const items: unknown[] = [];
    this.#skip();
    if (this.text[this.#at] === ']') {
      this.#at++;
      return items;
    }
    for (;;) {
      items.push(this.value(true));
      this.#skip();
      const c = this.text[this.#at++];
      if (c === ']') return items;
      if (c !== ',') notPlain();
    }
  }

  #mapping(): Record<string, unknown> {
    this.#at++;
    const map: Record<string, unknown> = Object.create(null);
    this.#skip();
    if (this.text[this.#at] === '}') {
      this.#at++;
      return {};
    }
    for (;;) {
      this.#skip();
      FLOW_KEY.lastIndex = this.#at;
      const key = FLOW_KEY.exec(this.text)?.[0];
      if (key === undefined || key === '__proto__' || Object.hasOwn(map, key)) notPlain();
      this.#at += key!.length;
      if (this.text[this.#at] !== ':' || this.text[this.#at + 1] !== ' ') notPlain();
      this.#at += 2;
      map[key!] = this.value(true);
      this.#skip();
      const c = this.text[this.#at++];
      if (c === '}') return { ...map };
      if (c !== ',') notPlain();
    }
  }

  /** A quoted scalar without escapes (a backslash in "..." or a '' in '...' goes to the parser). */
  #quoted(quote: string): string {
    const end = this.text.indexOf(quote, this.#at + 1);
    if (end === -1) notPlain();
    const content = this.text.slice(this.#at + 1, end);
    if (content.includes('\\') || this.text[end + 1] === quote) notPlain();
    this.#at = end + 1;
    return content;
  }

  #plain(inFlow: boolean): unknown {
    // In a flow collection a `:` before an indicator starts a mapping too (`[a:, b]` is [{a: null}, b]).
    const stop = inFlow ? PLAIN_STOP_IN_FLOW : PLAIN_STOP;
    stop.lastIndex = this.#at;
    const cut = stop.exec(this.text);
    const raw = this.text.slice(this.#at, cut ? cut.index : this.text.length).trimEnd();
    if (raw === '' || INDICATOR.test(raw) || raw.endsWith(':')) notPlain();
    if (cut && cut[0] !== ',' && cut[0] !== ']' && cut[0] !== '}') notPlain();
    this.#at += raw.length;
    if (raw === 'true') return true;
    if (raw === 'false') return false;
    if (/^(0|[1-9]\d{0,14})$/.test(raw)) return Number(raw);
    if (TYPED.test(raw)) notPlain();
    return raw;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
