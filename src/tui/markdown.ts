import { Marked, type MarkedExtension } from 'marked';
import { markedTerminal } from 'marked-terminal';

/** One parser per width: marked-terminal wraps paragraphs at the width it was made with. */
const parsers = new Map<number, Marked>();

/** Markdown for the terminal (headings, emphasis, lists, tables; code blocks highlighted), wrapped at `width`. */
export function renderMarkdown(text: string, width: number): string {
  const w = Math.max(20, Math.floor(width));
  let parser = parsers.get(w);
  if (!parser) {
    parser = new Marked(markedTerminal({ width: w, reflowText: true, tab: 2 }) as unknown as MarkedExtension);
    parsers.set(w, parser);
  }
  try {
    return (parser.parse(text, { async: false }) as string).replace(/\n+$/, '');
  } catch {
    // Half-streamed Markdown that trips the parser shows as plain text until more arrives.
    return text;
  }
}

/** Rendered blocks by width and text: a streaming answer re-renders only its last, unfinished block. */
const blocks = new Map<string, string>();
const MAX_CACHED_BLOCKS = 2000;

/**
 * An answer's Markdown split where a block ends (a blank line outside a code fence): every finished block is
 * rendered once and cached, so an answer of any length costs one block's parse per frame while it streams.
 */
export function renderStreamingMarkdown(text: string, width: number): string {
  const parts = splitBlocks(text);
  return parts
    .map((part, i) => {
      if (i === parts.length - 1) return renderMarkdown(part, width);
      const key = `${width}\u0000${part}`;
      let out = blocks.get(key);
      if (out === undefined) {
        out = renderMarkdown(part, width);
        if (blocks.size >= MAX_CACHED_BLOCKS) blocks.clear();
        blocks.set(key, out);
      }
      return out;
    })
    .filter((out) => out !== '')
    .join('\n\n');
}

/** The text cut at blank lines outside fenced code blocks. */
export function splitBlocks(text: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  let start = 0;
  const lines = text.split('\n');
  let offset = 0;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!;
    const marker = /^\s{0,3}(`{3,}|~{3,})/.exec(line)?.[1];
    if (marker && (fence === undefined || marker.startsWith(fence)))
      fence = fence === undefined ? marker : undefined;
    if (fence === undefined && line.trim() === '' && offset > start) {
      out.push(text.slice(start, offset));
      start = offset + line.length + 1;
    }
    offset += line.length + 1;
  }
  out.push(text.slice(Math.min(start, text.length)));
  return out.filter((part, i, all) => part.trim() !== '' || i === all.length - 1);
}
