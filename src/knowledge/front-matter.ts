import { errorMessage } from '../errors.js';
import { type FrontMatter, type FrontMatterOptions, parseFrontMatter } from '../util/front-matter.js';

/**
 * Front matter of a bundle file, never throwing: the `yaml` package throws (rather than reporting) on an alias
 * bomb (`ReferenceError: Excessive alias count`), and one hostile file must be one invalid file, not a bundle or
 * a server that cannot load. What it threw becomes a problem on line 1; the body is still the text after the
 * closing `---`. A problem repeated with the same message is reported once.
 *
 * With the default options, front matter in the shape OKF bundles are written in is read by `plainYaml` first:
 * the `yaml` package's parser is more than half of loading a bundle (profiled on 10,000 concepts), and most
 * front matter is a handful of `key: value` lines, flow lists and mappings, and block lists of those.
 */
export function readFrontMatter(
  text: string,
  options: FrontMatterOptions = { fastPath: false },
): FrontMatter {
  if (options.fastPath === false) {
    const fast = plainYaml(text);
    if (fast) return fast;
  }
  try {
    const fm = parseFrontMatter(text, options);
    // Deep nesting makes the parser report its stack overflow once per level it unwinds: say it once.
    const seen = new Set<string>();
    fm.problems = fm.problems.filter((p) => !seen.has(p.message) && seen.add(p.message));
    return fm;
  } catch (error) {
    const lines = text
      .replace(/^\uFEFF/, '')
      .replace(/\r\n?/g, '\n')
      .split('\n');
    const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
    return {
      data: {},
      present: true,
      body: lines.slice(close + 1).join('\n'),
      bodyLine: close + 2,
      keyLines: new Map(),
      problems: [{ line: 1, message: `the front matter cannot be read: ${errorMessage(error)}` }],
    };
  }
}

/** Thrown inside plainYaml for anything outside its subset; readFrontMatter then asks the `yaml` package. */
class NotPlain extends Error {}
const notPlain = (): never => {
  throw new NotPlain();
};

/** `key:` and the value after it, trailing spaces included (the value readers skip them). Linear: no `.*?`. */
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
 * The subset of YAML that OKF front matter is written in, read without the `yaml` package, or undefined for
 * anything else. The subset: a block mapping of `key: value` lines whose values are plain scalars (strings, the
 * integers 0..10^15, true and false), single- or double-quoted scalars without escapes, flow lists and flow
 * mappings of those, or, on the lines below a bare `key:`, a block list (of those, or of one-level mappings) or a
 * one-level block mapping. Comments, anchors, tags, block scalars, multi-line scalars, escapes, nesting beyond
 * that and every typed spelling other than those are left to the parser. test/knowledge/front-matter.test.ts
 * holds the result to the `yaml` package's on every input the subset takes.
 */
export function plainYaml(source: string): FrontMatter | undefined {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  if (!text.startsWith('---')) return undefined;
  const lines = text.split('\n');
  if (lines[0]!.trimEnd() !== '---') return undefined;
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (close === -1) return undefined;
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
  return {
    data: { ...data },
    present: true,
    body: lines.slice(close + 1).join('\n'),
    bodyLine: close + 2,
    keyLines,
    problems: [],
  };
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

/** A cursor over one line's value: scalars, and flow lists and mappings of scalars. */
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
      const key = /^[A-Za-z_][\w-]*/.exec(this.text.slice(this.#at))?.[0];
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
    const stop = inFlow ? /[,[\]{}]|:[ ,[\]{}]|:$| #/ : / #|: |:$/;
    const rest = this.text.slice(this.#at);
    const cut = stop.exec(rest);
    const raw = (cut ? rest.slice(0, cut.index) : rest).trimEnd();
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
