/**
 * Files a Markdown text (a SKILL.md body, or a file it references) points at: Markdown links, path-like tokens
 * (`scripts/extract.py`, `references/REFERENCE.md`) and bare file names (`FORMS.md`), each with its line and
 * whether it sits in code (a fenced block or an inline code span). URLs, anchors, absolute and home paths are not
 * references to the skill's own files, and neither is anything in a fenced block labelled `markdown` or `md`: it
 * shows a document, like the spec's own example of a SKILL.md linking to `references/REFERENCE.md`. Which of these count as references is the validator's call
 * (validate.ts, `countsAsReference`): code is where skills show examples of other people's paths.
 */
export interface FileReference {
  path: string;
  line: number;
  /** `link`: `[text](path)`; `path`: a token with a `/` in it; `name`: a bare file name with no folder. */
  kind: 'link' | 'path' | 'name';
  /** In a fenced code block or an inline code span. */
  code: boolean;
}

// The target stops at the next `(` or `]` too: otherwise each `](` of a line without `)` scanned to the line's end
// (quadratic: 200 KB of `](` took 31 s). A file of the skill's own has neither in its path.
const LINK = /\]\(\s*<?([^()[\]\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
// Maximal runs of the characters a path is made of: each character is looked at once, whatever the line holds.
const TOKEN = /[A-Za-z0-9_.~:@/-]+/g;
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const EXTENSION = /\.[A-Za-z0-9]+$/;

export function findReferences(body: string, firstLine: number): FileReference[] {
  const seen = new Set<string>();
  const found: FileReference[] = [];
  const add = (raw: string, line: number, kind: FileReference['kind'], code: boolean) => {
    const path = raw.replace(/^(\.\/)+/, '').replace(/[#?].*$/, '');
    if (!path || /^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/') || path.startsWith('~')) return;
    const key = `${path}\u0000${line}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push({ path, line, kind, code });
  };
  let fence: { char: string; length: number; example: boolean } | undefined;
  body.split('\n').forEach((text, i) => {
    const line = firstLine + i;
    const marker = FENCE.exec(text);
    if (fence) {
      // A fence closes with a run of its own character at least as long, and nothing after it.
      if (marker && marker[1]![0] === fence.char && marker[1]!.length >= fence.length && !marker[2]!.trim())
        fence = undefined;
      else if (!fence.example) scan(text, () => () => true, line, add);
      return;
    }
    if (marker && !(marker[1]![0] === '`' && marker[2]!.includes('`'))) {
      // A block labelled Markdown shows a document (a SKILL.md to write, say): nothing in it is this one's.
      const example = /^(markdown|md)\b/i.test(marker[2]!.trim());
      fence = { char: marker[1]![0]!, length: marker[1]!.length, example };
      return;
    }
    const spans = codeSpans(text);
    scan(text, () => inSpans(spans), line, add);
  });
  return found;
}

type Add = (raw: string, line: number, kind: FileReference['kind'], code: boolean) => void;

/** `inCode()` makes a fresh test for one pass over a line's matches, which come in increasing order. */
function scan(text: string, inCode: () => (index: number) => boolean, line: number, add: Add): void {
  const linkInCode = inCode();
  for (const m of text.matchAll(LINK)) add(m[1]!, line, 'link', linkInCode(m.index));
  const tokenInCode = inCode();
  for (const m of text.matchAll(TOKEN)) {
    const token = classify(m[0]);
    if (token) add(token.path, line, token.kind, tokenInCode(m.index));
  }
}

/** Whether each index, asked in increasing order, is in one of the spans: one walk over them per pass. */
function inSpans(spans: ReadonlyArray<[number, number]>): (index: number) => boolean {
  let next = 0;
  return (index) => {
    while (next < spans.length && spans[next]![1] <= index) next++;
    return next < spans.length && spans[next]![0] <= index;
  };
}

/**
 * A token as a path (`dir/…/file.ext`, the first folder without a dot, so `example.com/page.html` is not one) or a
 * bare file name (`FORMS.md`); anything else (a URL, `user@host:path`, a version, a word) is neither.
 */
function classify(raw: string): { path: string; kind: 'path' | 'name' } | undefined {
  const token = raw.replace(/[.:]+$/, '').replace(/^(\.\/)+/, '');
  if (!token || /[:~@]/.test(token) || token.startsWith('/') || token.includes('//')) return undefined;
  if (!EXTENSION.test(token)) return undefined;
  const parts = token.split('/');
  if (parts.length === 1) return /^[A-Za-z0-9_-]/.test(token) ? { path: token, kind: 'name' } : undefined;
  if (parts[0]!.includes('.') || parts.some((part) => part === '')) return undefined;
  return { path: token, kind: 'path' };
}

/**
 * The inline code spans of a line as [start, end) ranges: a run of backticks opens one, and the next run of the
 * same length closes it (CommonMark); a run never closed is literal text. One pass over the runs.
 */
export function codeSpans(text: string): Array<[number, number]> {
  const runs = Array.from(text.matchAll(/`+/g), (m) => ({ index: m.index, length: m[0].length }));
  // For each run, the next run of the same length (found from the end, so the whole is linear).
  const next = new Array<number>(runs.length).fill(-1);
  const latest = new Map<number, number>();
  for (let i = runs.length - 1; i >= 0; i--) {
    next[i] = latest.get(runs[i]!.length) ?? -1;
    latest.set(runs[i]!.length, i);
  }
  const spans: Array<[number, number]> = [];
  for (let i = 0; i < runs.length; i++) {
    const close = next[i]!;
    if (close < 0) continue;
    spans.push([runs[i]!.index, runs[close]!.index + runs[close]!.length]);
    i = close;
  }
  return spans;
}
