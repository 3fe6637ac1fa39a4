import { pushAll } from '../util/arrays.js';
import { isRecord } from '../util/is-record.js';
import { codeSpans } from './references.js';

/**
 * The MCP tools a Markdown text (a SKILL.md body, or a file it references) names, by the model-visible name
 * `mcp__<server>__<tool>` (mcp/names.ts), with the argument names written next to each: the only form that names
 * a tool without doubt. A bare `list_pull_requests` could be a function of a script, a CLI command or a word.
 *
 * An argument counts only where the text says it is one, so that a warning about it is right:
 * - a call written out: `mcp__github__list_pull_requests(state="open", repo=...)`, its `key=` / `key:` names;
 * - an inline code span after the name on its line holding `key: value`, `key=value` or a JSON object, right
 *   after the name or led in as below: "call mcp__github__list_pull_requests with `state: open`" (not "returns
 *   `status: ok`", which describes a result);
 * - a bare identifier span right after "with", "pass", "set" (or after another such span and "and" or ","), or
 *   followed by "parameter" / "argument" / "field": "with `state` and `repo`", "the `state` parameter";
 * - a fenced block starting on one of the two lines after the name whose text is a JSON object: its keys, or
 *   those of its `arguments` / `input` / `params` object when it is a whole call (`{"name": ..., "arguments": ...}`);
 *   a block that holds the name itself is read the same way.
 * A block labelled `markdown` shows a document, not this one's instructions (references.ts): nothing in it counts.
 */
export interface ToolMention {
  /** As written: `mcp__github__list_pull_requests`. */
  name: string;
  server: string;
  tool: string;
  line: number;
  /** Argument names written next to it, each with its line. */
  args: Array<{ name: string; line: number }>;
}

// A server name has no `__` and does not end with `_` (config); a tool part is what mcp/names.ts lets through.
const MENTION =
  /(?<![A-Za-z0-9_])mcp__([A-Za-z0-9-]+(?:_[A-Za-z0-9-]+)*)__([A-Za-z0-9_-]*[A-Za-z0-9])(?![A-Za-z0-9_*-])/g;
const FENCE = /^\s*(`{3,}|~{3,})(.*)$/;
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const KEYED = /^\s*["']?([A-Za-z_][A-Za-z0-9_-]*)["']?\s*(?::|=)(?!=)/;
const LEAD_IN = /\b(?:with|pass|passing|set|setting)\s*$/i;
const CHAIN = /^\s*(?:,|and|,\s*and)\s*$/i;
const NAMED_AFTER = /^\s*(?:parameter|argument|param|arg|field|input)s?\b/i;
const NOT_NAMES = new Set(['true', 'false', 'null', 'none', 'undefined']);
const CALL_OBJECT = ['arguments', 'input', 'params', 'parameters', 'args'];

interface Block {
  start: number;
  text: string;
  json: boolean;
}

/**
 * A server's own tool name written next to the server's name, for the servers given (the connected ones): the
 * tool name in an inline code span, the server's name right beside it as "the `github` server's `list_issues`",
 * "github's `list_issues` tool" or "the `list_issues` tool of (from, on) the github server". Its name is the
 * model-visible one the catalog would give it (`visible`). A tool name outside code, or a server named anywhere
 * else, is not read: in prose the words could be anything.
 */
export function findServerToolMentions(
  body: string,
  firstLine: number,
  servers: readonly string[],
  visible: (server: string, tool: string) => string,
): ToolMention[] {
  // Most texts name no server at all: nothing to scan line by line.
  const named = servers.filter((server) => body.includes(server));
  if (named.length === 0) return [];
  const names = named.map(literal).join('|');
  const tool = '`([A-Za-z0-9_.-]+)`';
  const server = `\`?(${names})\`?`;
  const forms = [
    new RegExp(`(?<![\\w-])${server}(?: server)?(?:'s|’s) ${tool}( tool\\b)?`, 'g'),
    new RegExp(`${tool} tool (?:of|from|on|in) (?:the )?${server} (?:MCP )?server\\b`, 'g'),
  ];
  const out: ToolMention[] = [];
  forEachProseLine(body, (text, index) => {
    if (!text.includes('`') || !named.some((server) => text.includes(server))) return;
    forms.forEach((form, k) => {
      for (const m of text.matchAll(form)) {
        const [serverName, toolName] = k === 0 ? [m[1]!, m[2]!] : [m[2]!, m[1]!];
        // "github's `config.json`" names a file: without the word "tool", only a snake_case name is taken.
        if (k === 0 && !m[3] && !/^[A-Za-z0-9]+(?:_[A-Za-z0-9]+)+$/.test(toolName)) continue;
        const name = visible(serverName, toolName);
        const item: ToolMention = {
          name,
          server: serverName,
          tool: toolName,
          line: firstLine + index,
          args: [],
        };
        const next = text.slice(m.index + m[0].length).search(/mcp__|`[A-Za-z0-9_.-]+` tool/);
        const end = m.index + m[0].length;
        item.args.push(
          ...inlineArgs(text, end, next < 0 ? text.length : end + next).map((arg) => ({
            name: arg,
            line: firstLine + index,
          })),
        );
        out.push(item);
      }
    });
  });
  return out;
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Each line outside fenced blocks, with its index. */
function forEachProseLine(body: string, fn: (text: string, index: number) => void): void {
  let fence: { char: string; length: number } | undefined;
  body.split('\n').forEach((text, i) => {
    const marker = FENCE.exec(text);
    if (fence) {
      if (marker && marker[1]![0] === fence.char && marker[1]!.length >= fence.length && !marker[2]!.trim())
        fence = undefined;
      return;
    }
    if (marker && !(marker[1]![0] === '`' && marker[2]!.includes('`'))) {
      fence = { char: marker[1]![0]!, length: marker[1]!.length };
      return;
    }
    fn(text, i);
  });
}

/**
 * The `mcp__server__tool` names a skill's Markdown mentions, with the argument names next to each; `firstLine`
 * is the line the body starts on in its file (after the front matter), so findings point at the file's lines.
 */
export function findToolMentions(body: string, firstLine: number): ToolMention[] {
  if (!body.includes('mcp__')) return [];
  const lines = body.split('\n');
  const mentions: ToolMention[] = [];
  const blocks: Block[] = [];
  const inBlock = new Map<number, Block>();
  let fence: { char: string; length: number; example: boolean; block: Block } | undefined;
  lines.forEach((text, i) => {
    const marker = FENCE.exec(text);
    if (fence) {
      if (marker && marker[1]![0] === fence.char && marker[1]!.length >= fence.length && !marker[2]!.trim()) {
        if (!fence.example) blocks.push(fence.block);
        fence = undefined;
        return;
      }
      if (fence.example) return;
      fence.block.text += `${text}\n`;
      inBlock.set(i, fence.block);
      if (text.includes('mcp__'))
        for (const m of text.matchAll(MENTION)) mentions.push(mention(m, i, firstLine));
      return;
    }
    if (marker && !(marker[1]![0] === '`' && marker[2]!.includes('`'))) {
      const label = marker[2]!.trim();
      fence = {
        char: marker[1]![0]!,
        length: marker[1]!.length,
        example: /^(markdown|md)\b/i.test(label),
        block: { start: i + 1, text: '', json: label === '' || /^(json|jsonc|json5)\b/i.test(label) },
      };
      return;
    }
    if (!text.includes('mcp__')) return;
    const found = [...text.matchAll(MENTION)];
    found.forEach((m, k) => {
      const item = mention(m, i, firstLine);
      const end = m.index + m[0].length;
      const until = found[k + 1]?.index ?? text.length;
      pushAll(
        item.args,
        inlineArgs(text, end, until).map((name) => ({ name, line: firstLine + i })),
      );
      mentions.push(item);
    });
  });
  for (const item of mentions) {
    const index = item.line - firstLine;
    const own = inBlock.get(index);
    const block = own ?? introduced(lines, index, item, blocks);
    if (!block?.json) continue;
    const keys = blockArgs(block.text, own !== undefined, item.name);
    pushAll(
      item.args,
      keys.map((name) => ({ name, line: firstLine + block.start })),
    );
  }
  // Those in blocks were found when their block was read: in line order again.
  return mentions.sort((a, b) => a.line - b.line);
}

/**
 * The block a mention's line introduces: the line ends with ":" after its last mention, and the block's fence
 * opens on the next line or after one blank line.
 */
function introduced(lines: readonly string[], index: number, item: ToolMention, blocks: readonly Block[]) {
  const text = lines[index]!;
  if (!/:\s*$/.test(text) || text.lastIndexOf(item.name) < text.lastIndexOf('mcp__')) return undefined;
  const block = blocks.find((b) => b.start - 1 > index && b.start - 1 <= index + 2);
  if (!block) return undefined;
  return lines.slice(index + 1, block.start - 1).every((t) => t.trim() === '') ? block : undefined;
}

function mention(m: RegExpMatchArray, index: number, firstLine: number): ToolMention {
  return { name: m[0], server: m[1]!, tool: m[2]!, line: firstLine + index, args: [] };
}

/** Argument names on the mention's own line, between it and the next mention. */
function inlineArgs(text: string, end: number, until: number): string[] {
  const names: string[] = [];
  const call = /^\s*\(([^()]*)\)/.exec(text.slice(end, until));
  if (call) {
    for (const part of splitTopLevel(call[1]!)) {
      const key = KEYED.exec(part)?.[1];
      if (key) names.push(key);
    }
    return names;
  }
  let after = end;
  let chained = false;
  for (const [start, stop] of codeSpans(text)) {
    if (start < end) continue;
    if (start >= until) break;
    const content = text
      .slice(start, stop)
      .replace(/^`+|`+$/g, '')
      .trim();
    const before = text.slice(after, start);
    // Led in by "with", "pass", "set" (or chained to the span before by "and" or a comma) in the same sentence.
    const led = (chained && CHAIN.test(before)) || (LEAD_IN.test(before) && !/[.;:!?]/.test(before));
    const keys = objectKeys(content) ?? keyedName(content);
    // `key: value` right after the name, or led in: "returns `status: ok`" describes a result, not arguments.
    const take = keys
      ? led || /^[\s`(]*$/.test(before)
      : IDENTIFIER.test(content) &&
        !NOT_NAMES.has(content.toLowerCase()) &&
        (led || NAMED_AFTER.test(text.slice(stop, until)));
    if (take) {
      pushAll(names, keys ?? [content]);
      chained = true;
      after = stop;
      continue;
    }
    chained = false;
    after = stop;
  }
  return names;
}

/** The key of a `key: value` or `key=value` span (not a URL's scheme), as a list of one. */
function keyedName(content: string): string[] | undefined {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(content)) return undefined;
  const key = KEYED.exec(content)?.[1];
  return key ? [key] : undefined;
}

/** Commas at depth zero: `a=1, b=[1, 2]` is two parts. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quote = '';
  let start = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quote) {
      if (c === '\\') i++;
      else if (c === quote) quote = '';
    } else if (c === '"' || c === "'") quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth--;
    else if (c === ',' && depth === 0) {
      parts.push(text.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(text.slice(start));
  return parts;
}

/** The top-level keys of a JSON object, or undefined when the text is not one. */
function objectKeys(text: string): string[] | undefined {
  const value = parseObject(text);
  return value ? Object.keys(value) : undefined;
}

function parseObject(text: string): Record<string, unknown> | undefined {
  if (!text.trimStart().startsWith('{')) return undefined;
  try {
    const value: unknown = JSON.parse(text);
    return isRecord(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A block's argument names: a whole call (`{"name": "<the tool>", "arguments": {...}}`) gives its arguments'
 * keys; a plain object gives its own keys only when the mention is outside the block (it introduces it).
 */
function blockArgs(text: string, holdsMention: boolean, name: string): string[] {
  const value = parseObject(text);
  if (!value) return [];
  const named = Object.values(value).includes(name);
  const inner = CALL_OBJECT.map((key) => value[key]).find(isRecord);
  if (named && inner) return Object.keys(inner);
  if (holdsMention || named) return [];
  return Object.keys(value);
}
