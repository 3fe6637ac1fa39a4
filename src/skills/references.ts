/**
 * Files a SKILL.md body points at: relative Markdown links and path-like tokens (`scripts/extract.py`,
 * `references/REFERENCE.md`), with the body line each is on. URLs, anchors, absolute and home paths are not
 * references to the skill's own files.
 */
export interface FileReference {
  path: string;
  line: number;
}

// The target stops at the next `(` or `]` too: otherwise each `](` of a line without `)` scanned to the line's end
// (quadratic: 200 KB of `](` took 31 s). A file of the skill's own has neither in its path.
const LINK = /\]\(\s*<?([^()[\]\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
// dir/…/file.ext, the first segment without a dot (so example.com/page.html is not one), optional leading ./
const PATH = /(?<![\w/.:~@-])(?:\.\/)?[A-Za-z0-9_-]+(?:\/[A-Za-z0-9_.-]+)+\.[A-Za-z0-9]+(?![\w/])/g;

export function findReferences(body: string, firstLine: number): FileReference[] {
  const seen = new Set<string>();
  const found: FileReference[] = [];
  const add = (raw: string, line: number) => {
    const path = raw.replace(/^\.\//, '').replace(/[#?].*$/, '');
    if (!path || /^[a-z][a-z0-9+.-]*:/i.test(path) || path.startsWith('/') || path.startsWith('~')) return;
    const key = `${path}\u0000${line}`;
    if (seen.has(key)) return;
    seen.add(key);
    found.push({ path, line });
  };
  body.split('\n').forEach((text, i) => {
    const line = firstLine + i;
    for (const m of text.matchAll(LINK)) add(m[1]!, line);
    for (const m of text.matchAll(PATH)) add(m[0], line);
  });
  return found;
}

/** `references/REFERENCE.md` is one level deep; `references/api/v2.md` is two. */
export function depthOf(path: string): number {
  return path.split('/').filter((part) => part && part !== '.').length - 1;
}
