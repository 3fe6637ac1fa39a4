/**
 * The prompt caches of the fake provider, simulated from the request bodies so the usage it reports is honest.
 *
 * A prompt is a sequence of blocks in the order the provider reads them: tool definitions, then the system
 * prompt, then each message's content blocks (OpenAI: each message). Each block boundary has a hash of
 * everything up to it and a running token count (characters of text / 4, as the fake counts everywhere).
 *
 * - Anthropic caches only at the `cache_control` breakpoints a request marks. A request reads the longest
 *   cached prefix ending at a block boundary up to 20 blocks before one of its breakpoints, and writes the prefix
 *   up to each breakpoint; a prefix shorter than 1,024 tokens is never cached. Usage: `input_tokens` (not
 *   cached), `cache_read_input_tokens`, `cache_creation_input_tokens`.
 * - OpenAI caches every prompt of 1,024 tokens or more by itself and reads the longest prefix it saw before, in
 *   steps of 128 tokens. Usage: `prompt_tokens` (all of them) with `prompt_tokens_details.cached_tokens`.
 */
import { createHash } from 'node:crypto';

type Json = Record<string, unknown>;

const MIN_CACHEABLE = 1_024;
const LOOKBACK = 20;
const OPENAI_STEP = 128;

export interface CacheUsage {
  /** Every input token of the prompt. */
  total: number;
  read: number;
  written: number;
}

interface Boundary {
  hash: string;
  /** Tokens up to and including this block. */
  tokens: number;
  breakpoint: boolean;
}

/** Keys whose string values are protocol, not text the model reads. */
const NOT_TEXT = new Set(['type', 'role', 'id', 'tool_use_id', 'tool_call_id', 'media_type']);

function countTextChars(value: unknown, key?: string): number {
  if (typeof value === 'string') return key !== undefined && NOT_TEXT.has(key) ? 0 : value.length;
  if (Array.isArray(value)) return value.reduce<number>((sum, item) => sum + countTextChars(item), 0);
  if (isRecord(value)) {
    return Object.entries(value).reduce((sum, [k, v]) => sum + countTextChars(v, k), 0);
  }
  return 0;
}

export class FakePromptCache {
  /** Anthropic: prefix hash → written. OpenAI: every prefix seen. */
  readonly #entries = new Set<string>();
  readonly #enabled: boolean;

  constructor(enabled = true) {
    this.#enabled = enabled;
  }

  /** The usage of an Anthropic Messages request, and what it leaves in the cache. */
  anthropic(raw: Json): CacheUsage {
    const blocks: Array<{ block: unknown; mark: boolean }> = [];
    const add = (block: unknown) => blocks.push({ block: unmarked(block), mark: marked(block) });
    for (const tool of asArray(raw.tools)) add(tool);
    if (typeof raw.system === 'string') add({ type: 'text', text: raw.system });
    else for (const block of asArray(raw.system)) add(block);
    for (const message of asArray(raw.messages)) {
      const content =
        typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      for (const block of asArray(content)) add({ role: message.role, ...block });
    }
    const bounds = boundaries(blocks);
    const total = bounds.at(-1)?.tokens ?? 0;
    if (!this.#enabled) return { total, read: 0, written: 0 };
    let read = 0;
    bounds.forEach((b, i) => {
      if (!b.breakpoint) return;
      for (let j = i; j >= Math.max(0, i - LOOKBACK); j--) {
        const at = bounds[j]!;
        if (this.#entries.has(at.hash)) read = Math.max(read, at.tokens);
      }
    });
    let last = 0;
    for (const b of bounds) {
      if (!b.breakpoint || b.tokens < MIN_CACHEABLE) continue;
      this.#entries.add(b.hash);
      last = Math.max(last, b.tokens);
    }
    return { total, read, written: Math.max(0, last - read) };
  }

  /** The usage of an OpenAI Chat Completions request, and what it leaves in the cache. */
  openai(raw: Json): CacheUsage {
    const blocks = [...asArray(raw.tools), ...asArray(raw.messages)].map((block) => ({ block, mark: false }));
    const bounds = boundaries(blocks);
    const total = bounds.at(-1)?.tokens ?? 0;
    if (!this.#enabled) return { total, read: 0, written: 0 };
    let hit = 0;
    for (const b of bounds) if (this.#entries.has(b.hash)) hit = Math.max(hit, b.tokens);
    if (total >= MIN_CACHEABLE) for (const b of bounds) this.#entries.add(b.hash);
    const read = hit >= MIN_CACHEABLE ? hit - (hit % OPENAI_STEP) : 0;
    return { total, read, written: 0 };
  }
}

function boundaries(blocks: ReadonlyArray<{ block: unknown; mark: boolean }>): Boundary[] {
  const out: Boundary[] = [];
  let hash = '';
  let chars = 0;
  for (const { block, mark } of blocks) {
    hash = createHash('sha256').update(hash).update(JSON.stringify(block)).digest('hex');
    chars += countTextChars(block);
    out.push({ hash, tokens: Math.ceil(chars / 4), breakpoint: mark });
  }
  return out;
}

function marked(block: unknown): boolean {
  return isRecord(block) && isRecord(block.cache_control);
}

/** The block as the cache compares it: the breakpoint mark is not part of the prompt. */
function unmarked(block: unknown): unknown {
  if (!isRecord(block) || !('cache_control' in block)) return block;
  const { cache_control: _mark, ...rest } = block;
  return rest;
}

function asArray(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
