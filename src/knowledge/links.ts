/**
 * Markdown links in a concept body (§6.1): inline `[text](target)` and `![alt](target)`, and reference
 * definitions `[label]: target`. Code (fenced, indented under a fence, inline backticks) is skipped, and so are
 * footnotes (`[^id]`), which join into `sources` rather than link (§5.1). Hand-written rather than a Markdown
 * parser: the link grammar needed here is small, and a full parser would cost more than the rest of the loader.
 */
export interface BodyLink {
  target: string;
  text: string;
  /** 1-based line in the body. */
  line: number;
}

const INLINE = /!?\[((?:[^[\]]|\[[^\]]*\])*)\]\(\s*<?([^)\s>]+)>?(?:\s+(?:"[^"]*"|'[^']*'))?\s*\)/g;
const REFERENCE = /^ {0,3}\[([^\]^][^\]]*)\]:\s*<?(\S+?)>?(?:\s+.*)?$/;

export function bodyLinks(body: string): BodyLink[] {
  const links: BodyLink[] = [];
  let fence: string | undefined;
  body.split('\n').forEach((raw, i) => {
    const open = /^ {0,3}(`{3,}|~{3,})/.exec(raw);
    if (fence !== undefined) {
      if (open && open[1]![0] === fence[0] && open[1]!.length >= fence.length && raw.trim() === open[1])
        fence = undefined;
      return;
    }
    if (open) {
      fence = open[1]!;
      return;
    }
    const reference = REFERENCE.exec(raw);
    if (reference) {
      links.push({ target: reference[2]!, text: reference[1]!, line: i + 1 });
      return;
    }
    const text = raw.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
    for (const match of text.matchAll(INLINE)) {
      links.push({ target: match[2]!, text: match[1]!.trim(), line: i + 1 });
    }
  });
  return links;
}
