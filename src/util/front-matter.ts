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

export function parseFrontMatter(source: string): FrontMatter {
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
