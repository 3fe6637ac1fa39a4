import { createHash } from 'node:crypto';
import { readCacheFile, writeCacheFile } from '../util/cache-file.js';
import { SERVER_FIELDS, TOOL_FIELDS } from './ranking.js';

/**
 * The search terms of tool definitions (words split, stemmed; what the tool index is built from; not the model
 * tokens `tack tools` counts, which the store keeps in `token_counts`), kept between runs (`<state>/indexes/tool-terms.idx`): tokenizing a catalog
 * (names split, words stemmed, schemas walked) is a third or more of building the tool index, and a catalog
 * seldom changes between sessions. One entry per server, keyed by a SHA-256 of everything its tokens are made
 * from (its name, what it says of itself, each tool's name, title, description, schema and learned examples,
 * and the ranking's tokenizing switches), so a changed server simply misses and is tokenized again; the rest
 * of the index (postings, statistics) is built from the tokens as ever.
 *
 * Entries of catalogs not seen for MAX_AGE_DAYS are dropped when the file is next written; the file is written
 * only after a server was tokenized afresh. Like every cache file it is checked, never trusted: a damaged file
 * is a miss (`problem` says why), a damaged entry a miss of that server.
 */
export const TOOL_TERMS_KIND = 'tool-terms';
export const TOOL_TERMS_VERSION = 1;
const MAX_AGE_DAYS = 30;

/** A server's tokens: per tool its fields (TOOL_FIELDS), and the server's own document (SERVER_FIELDS). */
export interface ServerTerms {
  tools: string[][][];
  server: string[][];
}

interface Stored {
  day: number;
  /** Decoded on first use. */
  tokens: ServerTerms | undefined;
  /** Undecoded: the term ids of each field, `[length, ids...]` in turn. */
  ids: Uint32Array | undefined;
  toolCount: number;
  used: boolean;
}

export class ToolTermCache {
  readonly file: string;
  #entries: Map<string, Stored> | undefined;
  #terms: readonly string[] = [];
  #changed = false;
  #problem: string | undefined;

  constructor(file: string) {
    this.file = file;
  }

  /** Why the file on disk was not used, if it was not (read on first use). */
  get problem(): string | undefined {
    this.#load();
    return this.#problem;
  }

  /** The cache key of a server's tokens: everything they are made from, hashed. */
  static key(parts: unknown): string {
    return createHash('sha256')
      .update(JSON.stringify([TOOL_TERMS_VERSION, parts]))
      .digest('hex');
  }

  get(key: string): ServerTerms | undefined {
    const stored = this.#load().get(key);
    if (!stored) return undefined;
    if (!stored.tokens) {
      stored.tokens = decode(stored.ids!, stored.toolCount, this.#terms);
      stored.ids = undefined;
      if (!stored.tokens) {
        this.#entries!.delete(key);
        return undefined;
      }
    }
    stored.used = true;
    return stored.tokens;
  }

  set(key: string, tokens: ServerTerms): void {
    this.#load().set(key, {
      day: today(),
      tokens,
      ids: undefined,
      toolCount: tokens.tools.length,
      used: true,
    });
    this.#changed = true;
  }

  /**
   * Writes the file when a server was tokenized since it was read: the entries used in this run dated today,
   * the others kept until they are MAX_AGE_DAYS old. Returns undefined when there was nothing to write.
   */
  save(): { ok: boolean; message?: string } | undefined {
    if (!this.#changed || !this.#entries) return undefined;
    const now = today();
    const terms: string[] = [];
    const termIds = new Map<string, number>();
    const rows: Array<[string, number, number]> = [];
    const offsets: number[] = [0];
    const ids: number[] = [];
    const put = (field: readonly string[]) => {
      ids.push(field.length);
      for (const token of field) {
        let id = termIds.get(token);
        if (id === undefined) {
          id = terms.length;
          terms.push(token);
          termIds.set(token, id);
        }
        ids.push(id);
      }
    };
    for (const [key, stored] of this.#entries) {
      const day = stored.used ? now : stored.day;
      if (now - day > MAX_AGE_DAYS) continue;
      const tokens = stored.tokens ?? decode(stored.ids!, stored.toolCount, this.#terms);
      if (!tokens) continue;
      for (const tool of tokens.tools) for (const field of tool) put(field);
      for (const field of tokens.server) put(field);
      rows.push([key, day, tokens.tools.length]);
      offsets.push(ids.length);
    }
    const result = writeCacheFile(this.file, TOOL_TERMS_KIND, TOOL_TERMS_VERSION, {
      meta: { json: { fields: [TOOL_FIELDS, SERVER_FIELDS], terms, entries: rows } },
      offsets: Uint32Array.from(offsets),
      ids: Uint32Array.from(ids),
    });
    if (result.ok) this.#changed = false;
    return result;
  }

  #load(): Map<string, Stored> {
    if (this.#entries) return this.#entries;
    this.#entries = new Map();
    const read = readCacheFile(this.file, { kind: TOOL_TERMS_KIND, version: TOOL_TERMS_VERSION });
    if (!read.ok) {
      if (read.reason !== 'missing') this.#problem = read.message;
      return this.#entries;
    }
    const meta = (read.sections.get('meta') as { json?: unknown } | undefined)?.json as
      | { fields?: unknown; terms?: unknown; entries?: unknown }
      | undefined;
    const offsets = read.sections.get('offsets');
    const ids = read.sections.get('ids');
    if (
      !meta ||
      JSON.stringify(meta.fields) !== JSON.stringify([TOOL_FIELDS, SERVER_FIELDS]) ||
      !Array.isArray(meta.terms) ||
      !meta.terms.every((t) => typeof t === 'string') ||
      !Array.isArray(meta.entries) ||
      !(offsets instanceof Uint32Array) ||
      !(ids instanceof Uint32Array) ||
      offsets.length !== meta.entries.length + 1
    ) {
      this.#problem = `${this.file} is not a cache of tool search terms`;
      return this.#entries;
    }
    this.#terms = meta.terms as string[];
    (meta.entries as unknown[]).forEach((row, i) => {
      const from = offsets[i]!;
      const to = offsets[i + 1]!;
      if (!Array.isArray(row) || row.length !== 3 || from > to || to > ids.length) return;
      const [key, day, toolCount] = row as unknown[];
      if (typeof key !== 'string' || !Number.isSafeInteger(day) || !Number.isSafeInteger(toolCount)) return;
      this.#entries!.set(key, {
        day: day as number,
        tokens: undefined,
        ids: ids.subarray(from, to),
        toolCount: toolCount as number,
        used: false,
      });
    });
    return this.#entries;
  }
}

/** An entry's tokens, or undefined when its ids do not make `toolCount` tools and a server document. */
function decode(ids: Uint32Array, toolCount: number, terms: readonly string[]): ServerTerms | undefined {
  let at = 0;
  const field = (): string[] | undefined => {
    if (at >= ids.length) return undefined;
    const length = ids[at++]!;
    if (length > ids.length - at) return undefined;
    const out = new Array<string>(length);
    for (let i = 0; i < length; i++) {
      const term = terms[ids[at++]!];
      if (term === undefined) return undefined;
      out[i] = term;
    }
    return out;
  };
  const fields = (count: number): string[][] | undefined => {
    const out: string[][] = [];
    for (let f = 0; f < count; f++) {
      const read = field();
      if (!read) return undefined;
      out.push(read);
    }
    return out;
  };
  if (toolCount < 0 || toolCount > ids.length) return undefined;
  const tools: string[][][] = [];
  for (let t = 0; t < toolCount; t++) {
    const read = fields(TOOL_FIELDS.length);
    if (!read) return undefined;
    tools.push(read);
  }
  const server = fields(SERVER_FIELDS.length);
  return server && at === ids.length ? { tools, server } : undefined;
}

function today(): number {
  return Math.floor(Date.now() / 86_400_000);
}
