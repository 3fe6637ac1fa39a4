import { isMap, isScalar, LineCounter, parseDocument } from 'yaml';

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
  /** Problems: an unclosed block, invalid YAML, a value that is not a mapping. */
  problems: Array<{ line: number; message: string }>;
}

export interface FrontMatterOptions {
  /**
   * Take plain `key: value` lines as they are instead of running the YAML parser (default true). Only lines
   * whose value YAML would read as that very string qualify; anything else (quotes, block scalars, nesting,
   * comments, values YAML would type) goes to the parser. Measured on 10,000 SKILL.md files (bench/skills.ts):
   * the parser took 0.6 s, this 0.03 s; test/skills/validate.test.ts holds the two to the same result.
   */
  fastPath?: boolean;
}

export function parseFrontMatter(source: string, options: FrontMatterOptions = {}): FrontMatter {
  const text = source.replace(/^\uFEFF/, '').replace(/\r\n?/g, '\n');
  const lines = text.split('\n');
  const none = (problems: FrontMatter['problems'] = []): FrontMatter => ({
    data: {},
    present: problems.length > 0,
    body: text,
    bodyLine: 1,
    keyLines: new Map(),
    problems,
  });
  if (lines[0]?.trimEnd() !== '---') return none();
  const close = lines.findIndex((line, i) => i > 0 && line.trimEnd() === '---');
  if (close === -1) return none([{ line: 1, message: 'front matter is not closed with a --- line' }]);
  const fast = options.fastPath === false ? undefined : plainLines(lines, close);
  if (fast) return fast;

  const yamlText = lines.slice(1, close).join('\n');
  const counter = new LineCounter();
  const doc = parseDocument(yamlText, { lineCounter: counter, prettyErrors: false, uniqueKeys: true });
  const body = lines.slice(close + 1).join('\n');
  const keyLines = new Map<string, number>();
  const result: FrontMatter = { data: {}, present: true, body, bodyLine: close + 2, keyLines, problems: [] };
  // Line 1 of the YAML is line 2 of the file.
  const lineOf = (offset: number) => counter.linePos(offset).line + 1;
  for (const error of doc.errors) {
    result.problems.push({
      line: lineOf(error.pos[0]),
      message: `invalid YAML: ${error.message.split('\n')[0]}`,
    });
  }
  if (doc.errors.length > 0) return result;
  if (doc.contents === null) return result; // empty front matter: a mapping with nothing in it
  if (!isMap(doc.contents)) {
    result.problems.push({ line: 2, message: 'front matter must be a YAML mapping (key: value lines)' });
    return result;
  }
  for (const item of doc.contents.items) {
    if (isScalar(item.key) && item.key.range) keyLines.set(String(item.key.value), lineOf(item.key.range[0]));
  }
  const data = doc.toJS({ maxAliasCount: 100 }) as unknown;
  if (typeof data === 'object' && data !== null && !Array.isArray(data))
    result.data = data as Record<string, unknown>;
  return result;
}

const PLAIN_LINE = /^([A-Za-z_][\w-]*):[ \t]+(\S.*?)[ \t]*$/;
/** A first character that makes a YAML value anything but a plain string. */
const INDICATOR = /^[-?:,[\]{}#&*!|>'"%@`]/;
/** Plain values YAML's core schema reads as null, booleans or numbers. */
const TYPED =
  /^(~|null|true|false|yes|no|on|off|[-+]?(\d[\d_]*(\.\d*)?|\.\d+)([eE][-+]?\d+)?|0x[\da-fA-F]+|0o[0-7]+|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN))$/i;

/** The fast path of FrontMatterOptions: every line between the markers a plain `key: value`, or undefined. */
function plainLines(lines: readonly string[], close: number): FrontMatter | undefined {
  const data: Record<string, unknown> = {};
  const keyLines = new Map<string, number>();
  for (let i = 1; i < close; i++) {
    const match = PLAIN_LINE.exec(lines[i]!);
    if (!match) return undefined;
    const [, key, value] = match as unknown as [string, string, string];
    if (key in data || INDICATOR.test(value) || TYPED.test(value) || /:(\s|$)|\s#/.test(value))
      return undefined;
    data[key] = value;
    keyLines.set(key, i + 1);
  }
  return {
    data,
    present: true,
    body: lines.slice(close + 1).join('\n'),
    bodyLine: close + 2,
    keyLines,
    problems: [],
  };
}
