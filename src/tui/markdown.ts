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
