/**
 * A full-text index that ranks exactly as MiniSearch 7 does with its defaults (BM25+ per field, k = 1.2,
 * b = 0.7, d = 0.5; fields boosted; terms OR-combined; a document's score times the number of distinct query
 * terms it matched; MiniSearch's tokenizer: split on newlines, Unicode spaces and punctuation, lower-cased), so
 * the knowledge base and the docs server rank as they did when they used MiniSearch, but built on typed arrays
 * instead of a radix tree of Maps. Measured on 10,000 documents (bench/docs.ts, bench/knowledge.ts): a fraction of
 * MiniSearch's build time and memory; a search sums scores into one reused buffer and keeps the best `k`, where
 * MiniSearch makes and sorts an object per matched document (most of its time on common words); and an index
 * can be saved and loaded as a few arrays (`snapshot`, `addEntry`), so a warm start loads instead of rebuilding.
 *
 * Each document is kept as its entry: per field, its length (MiniSearch's: distinct tokens as written, the empty
 * token of a leading or trailing separator included) and its (term, count) pairs. The postings are inverted from
 * the entries when a search first needs them, and again after documents come or go: exact statistics after any
 * change, at the cost of one pass over the entries (tens of milliseconds at 10,000 documents).
 *
 * One of tack's two ranking engines, each for a different kind of text. This one ranks documents (docs pages,
 * knowledge concepts, skill descriptions in skills/overlap.ts): long texts, a few fields, saved and loaded whole.
 * search/bm25f.ts ranks tool definitions: six short fields (each saturated on its own by default, jointly as BM25F
 * when asked), removal of one server's tools at a time, and the term statistics query expansion and `--explain` read. Folding either into the other
 * would change what a user's docs or tool searches return.
 */

/** MiniSearch's BM25+ parameters (`defaultBM25params`). */
const K = 1.2;
const B = 0.7;
const D = 0.5;

/** One character MiniSearch's tokenizer splits on: `/[\n\r\p{Z}\p{P}]/u`. */
const SEPARATOR = /^[\n\r\p{Z}\p{P}]$/u;
/** Separator or not, per UTF-16 unit of the Basic Multilingual Plane: 0 not yet known, 1 separator, 2 not. */
const BMP = new Uint8Array(0x10000);

/** `separatorWidth` of each ASCII character. */
const ASCII_SEPARATOR = Uint8Array.from({ length: 0x80 }, (_, code) =>
  SEPARATOR.test(String.fromCharCode(code)) ? 1 : 0,
);

function isSeparatorUnit(code: number): boolean {
  let known = BMP[code]!;
  if (known === 0) {
    // A lone surrogate is neither space nor punctuation (pairs are looked at in separatorWidth).
    known = code >= 0xd800 && code <= 0xdfff ? 2 : SEPARATOR.test(String.fromCharCode(code)) ? 1 : 2;
    BMP[code] = known;
  }
  return known === 1;
}

/** How many UTF-16 units the separator at `i` takes (0: not a separator). */
function separatorWidth(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code >= 0xd800 && code <= 0xdbff && i + 1 < text.length) {
    const next = text.charCodeAt(i + 1);
    if (next >= 0xdc00 && next <= 0xdfff) return SEPARATOR.test(text.slice(i, i + 2)) ? 2 : 0;
  }
  return isSeparatorUnit(code) ? 1 : 0;
}

/**
 * Calls `emit` with each token of `text` as MiniSearch's `text.split(/[\n\r\p{Z}\p{P}]+/u)` gives it (not
 * lower-cased), skipping the empty ones; returns whether that split also gives an empty token (a text that is
 * empty, or starts or ends with a separator), which MiniSearch counts in the field's length.
 */
export function forEachToken(text: string, emit: (token: string) => void): boolean {
  const n = text.length;
  if (n === 0) return true;
  let empty = false;
  let start = 0;
  let i = 0;
  while (i < n) {
    const width = separatorWidth(text, i);
    if (width === 0) {
      i++;
      continue;
    }
    if (i > start) emit(text.slice(start, i));
    else if (i === 0) empty = true;
    i += width;
    start = i;
  }
  if (start < n) emit(text.slice(start));
  else empty = true;
  return empty;
}

/** The lower-cased tokens of a query, in order, repeats kept (MiniSearch scores a repeated word twice). */
export function queryTerms(text: string): string[] {
  const terms: string[] = [];
  forEachToken(text, (token) => terms.push(token.toLowerCase()));
  return terms;
}

export interface TextIndexOptions {
  /** Field names, in order: every document gives one text per field. */
  fields: readonly string[];
  /** A weight per field name (MiniSearch's `boost`); a field not named, or given 0, weighs 1 (as in MiniSearch). */
  boost?: Readonly<Record<string, number>>;
}

export interface TextHit {
  key: string;
  score: number;
}

/**
 * The index's documents as a cache keeps them: the term table and, per document, its entry (see TextIndex),
 * whose term ids index `terms`. `entries` holds the entries back to back; document i's is
 * `entries[offsets[i]..offsets[i + 1]]`.
 */
export interface TextIndexSnapshot {
  terms: string[];
  keys: string[];
  offsets: Uint32Array;
  entries: Uint32Array;
}

/** Snapshot entry `i` (a view, not a copy). */
export function snapshotEntry(snapshot: TextIndexSnapshot, i: number): Uint32Array {
  return snapshot.entries.subarray(snapshot.offsets[i]!, snapshot.offsets[i + 1]!);
}

/** Entries laid end to end as a cache file keeps them: one array, and where each starts (plus the end). */
export function packEntries(parts: readonly Uint32Array[]): { offsets: Uint32Array; entries: Uint32Array } {
  const offsets = new Uint32Array(parts.length + 1);
  let total = 0;
  parts.forEach((part, i) => {
    offsets[i] = total;
    total += part.length;
  });
  offsets[parts.length] = total;
  const entries = new Uint32Array(total);
  parts.forEach((part, i) => {
    entries.set(part, offsets[i]!);
  });
  return { offsets, entries };
}

/** The term ids of one saved term table as the index numbers them; made by `TextIndex.terms()`. */
export interface TermMapping {
  readonly table: readonly string[];
  /** The index's id of each table term, or -1 when not yet looked up; undefined: the ids are the same. */
  readonly ids: Int32Array | undefined;
}

interface Postings {
  /** Per field: `offsets[t]..offsets[t + 1]` are term t's postings in `docs` and `tfs`. */
  offsets: Uint32Array[];
  docs: Uint32Array[];
  tfs: Uint32Array[];
}

export class TextIndex {
  readonly fields: readonly string[];
  readonly #fieldCount: number;
  readonly #boost: Float64Array;
  readonly #termIds = new Map<string, number>();
  readonly #terms: string[] = [];
  /** Documents by slot (dense small numbers, reused after removal). */
  readonly #keys: Array<string | undefined> = [];
  readonly #entries: Array<Uint32Array | undefined> = [];
  readonly #slots = new Map<string, number>();
  readonly #free: number[] = [];
  /** Field lengths by slot, `#lengths[slot * fields + f]`. */
  #lengths = new Uint32Array(0);
  readonly #totalLength: Float64Array;
  #postings: Postings | undefined;
  /** Tokens as written and their terms, looked up without making a string of the token. */
  readonly #surfaces = new SurfaceTable();
  /** Per-term scratch counts while a document is tokenized, by term id. */
  #counts = new Uint32Array(0);
  /** Per-slot buffers reused by every search. */
  #scores = new Float64Array(0);
  #matched = new Uint32Array(0);
  #lastTerm = new Int32Array(0);

  constructor(options: TextIndexOptions) {
    this.fields = [...options.fields];
    this.#fieldCount = this.fields.length;
    this.#boost = Float64Array.from(this.fields, (f) => options.boost?.[f] || 1);
    this.#totalLength = new Float64Array(this.#fieldCount);
  }

  /** How many documents are indexed. */
  get size(): number {
    return this.#slots.size;
  }

  has(key: string): boolean {
    return this.#slots.has(key);
  }

  /** Indexes a document (one text per field, in `fields` order), replacing any under the same key. */
  add(key: string, texts: readonly string[]): void {
    this.#put(key, this.#tokenize(texts));
  }

  /** Drops a document; false when there was none under `key`. */
  remove(key: string): boolean {
    const slot = this.#slots.get(key);
    if (slot === undefined) return false;
    const n = this.#fieldCount;
    for (let f = 0; f < n; f++) {
      this.#totalLength[f]! -= this.#lengths[slot * n + f]!;
      this.#lengths[slot * n + f] = 0;
    }
    this.#slots.delete(key);
    this.#keys[slot] = undefined;
    this.#entries[slot] = undefined;
    this.#free.push(slot);
    this.#postings = undefined;
    return true;
  }

  /**
   * How this index numbers the terms of a saved table, for `addEntry`. An index with no terms yet takes the
   * table's numbering as its own, so the entries of a cache file are used as they are, without a copy.
   */
  terms(table: readonly string[]): TermMapping {
    if (this.#terms.length === 0) {
      for (const term of table) this.#intern(term);
      // A table with a term twice would make two ids one: then map each id on its own.
      if (this.#terms.length === table.length) return { table, ids: undefined };
    }
    return { table, ids: new Int32Array(table.length).fill(-1) };
  }

  /**
   * Indexes a document from a saved entry (a snapshot's, whose term ids index `mapping.table`). Returns false,
   * indexing nothing, when the entry is malformed (wrong length, a term id out of range, a zero count): a cache
   * file is checked, not trusted, and the caller indexes that document from its text instead.
   */
  addEntry(key: string, entry: Uint32Array, mapping: TermMapping): boolean {
    if (!validEntry(entry, this.#fieldCount, mapping.table.length)) return false;
    const { ids, table } = mapping;
    if (ids === undefined) {
      this.#put(key, entry);
      return true;
    }
    const copy = Uint32Array.from(entry);
    const n = this.#fieldCount;
    let at = n;
    for (let f = 0; f < n; f++) {
      const count = copy[at++]!;
      for (let i = 0; i < count; i++, at += 2) {
        const local = copy[at]!;
        let id = ids[local]!;
        if (id < 0) {
          id = this.#intern(table[local]!);
          ids[local] = id;
        }
        copy[at] = id;
      }
    }
    this.#put(key, copy);
    return true;
  }

  /** The index's documents with a term table holding only the terms they use (for a cache file). */
  snapshot(): TextIndexSnapshot {
    const n = this.#fieldCount;
    const remap = new Int32Array(this.#terms.length).fill(-1);
    const terms: string[] = [];
    const keys: string[] = [];
    let total = 0;
    for (const [key, slot] of this.#slots) {
      keys.push(key);
      total += this.#entries[slot]!.length;
    }
    const offsets = new Uint32Array(keys.length + 1);
    const entries = new Uint32Array(total);
    let at = 0;
    keys.forEach((key, i) => {
      const entry = this.#entries[this.#slots.get(key)!]!;
      offsets[i] = at;
      entries.set(entry, at);
      let p = at + n;
      for (let f = 0; f < n; f++) {
        const count = entries[p++]!;
        for (let j = 0; j < count; j++, p += 2) {
          const id = entries[p]!;
          let local = remap[id]!;
          if (local < 0) {
            local = terms.length;
            terms.push(this.#terms[id]!);
            remap[id] = local;
          }
          entries[p] = local;
        }
      }
      at += entry.length;
    });
    offsets[keys.length] = at;
    return { terms, keys, offsets, entries };
  }

  /**
   * The `k` best documents for a query, best first (ties: the document indexed first), among those `accept`
   * lets through when given. Scores are MiniSearch's.
   */
  search(query: string, k: number, accept?: (key: string) => boolean): TextHit[] {
    const limit = Math.floor(k);
    if (!(limit >= 1) || this.#slots.size === 0) return [];
    // Each distinct known term once, with how often the query says it (a repeat adds its score again).
    const wanted = new Map<number, number>();
    for (const term of queryTerms(query)) {
      const id = this.#termIds.get(term);
      if (id !== undefined) wanted.set(id, (wanted.get(id) ?? 0) + 1);
    }
    if (wanted.size === 0) return [];
    const postings = this.#postingsNow();
    const n = this.#fieldCount;
    const live = this.#slots.size;
    const scores = this.#scores;
    const matched = this.#matched;
    const lastTerm = this.#lastTerm;
    const lengths = this.#lengths;
    const touched: number[] = [];
    let termIndex = 0;
    for (const [id, repeats] of wanted) {
      termIndex++;
      for (let f = 0; f < n; f++) {
        const offsets = postings.offsets[f]!;
        const from = offsets[id]!;
        const to = offsets[id + 1]!;
        if (from === to) continue;
        const df = to - from;
        const idf = Math.log(1 + (live - df + 0.5) / (df + 0.5));
        const avg = this.#totalLength[f]! / live;
        const weight = this.#boost[f]! * repeats;
        const docs = postings.docs[f]!;
        const tfs = postings.tfs[f]!;
        for (let p = from; p < to; p++) {
          const slot = docs[p]!;
          const tf = tfs[p]!;
          const bm25 = idf * (D + (tf * (K + 1)) / (tf + K * (1 - B + (B * lengths[slot * n + f]!) / avg)));
          if (lastTerm[slot] !== termIndex) {
            if (lastTerm[slot] === 0) touched.push(slot);
            lastTerm[slot] = termIndex;
            matched[slot]!++;
          }
          scores[slot]! += weight * bm25;
        }
      }
    }
    const best = new TopK(limit);
    for (const slot of touched) {
      const score = scores[slot]! * matched[slot]!;
      scores[slot] = 0;
      matched[slot] = 0;
      lastTerm[slot] = 0;
      if (best.admits(score, slot) && (!accept || accept(this.#keys[slot]!))) best.add(score, slot);
    }
    return best.sorted().map(({ score, slot }) => ({ key: this.#keys[slot]!, score }));
  }

  #put(key: string, entry: Uint32Array): void {
    this.remove(key);
    const slot = this.#free.pop() ?? this.#keys.length;
    const n = this.#fieldCount;
    this.#grow(slot + 1);
    this.#keys[slot] = key;
    this.#entries[slot] = entry;
    this.#slots.set(key, slot);
    for (let f = 0; f < n; f++) {
      this.#lengths[slot * n + f] = entry[f]!;
      this.#totalLength[f]! += entry[f]!;
    }
    this.#postings = undefined;
  }

  #intern(term: string): number {
    let id = this.#termIds.get(term);
    if (id === undefined) {
      id = this.#terms.length;
      this.#terms.push(term);
      this.#termIds.set(term, id);
    }
    return id;
  }

  /** A document's entry: per field its length, then its (term, count) pairs, preceded by their number. */
  #tokenize(texts: readonly string[]): Uint32Array {
    const n = this.#fieldCount;
    const out: number[] = new Array<number>(n).fill(0);
    const surfaces = this.#surfaces;
    const order: number[] = [];
    for (let f = 0; f < n; f++) {
      const text = texts[f] ?? '';
      const stamp = surfaces.nextStamp();
      let distinct = 0;
      order.length = 0;
      // forEachToken's scan, inlined: no string is made for a token seen before, which is most of them.
      const length = text.length;
      let empty = length === 0;
      let start = -1;
      let hash = 0;
      for (let i = 0; i <= length; ) {
        let width = 1;
        if (i < length) {
          const code = text.charCodeAt(i);
          width = code < 0x80 ? ASCII_SEPARATOR[code]! : separatorWidth(text, i);
          if (width === 0) {
            if (start < 0) {
              start = i;
              hash = surfaces.seed;
            }
            hash = Math.imul(hash ^ code, 0x01000193);
            i++;
            continue;
          }
        }
        if (start >= 0) {
          const surface = surfaces.find(text, start, i, hash, this.#termOf);
          if (surfaces.stamp(surface, stamp)) distinct++;
          const id = surfaces.term(surface);
          if (id >= this.#counts.length) {
            const counts = new Uint32Array(Math.max(64, this.#terms.length * 2));
            counts.set(this.#counts);
            this.#counts = counts;
          }
          if (this.#counts[id]!++ === 0) order.push(id);
          start = -1;
        } else if (i === 0 || i === length) empty = true;
        i += width;
      }
      out[f] = distinct + (empty ? 1 : 0);
      out.push(order.length);
      for (const id of order) {
        out.push(id, this.#counts[id]!);
        this.#counts[id] = 0;
      }
    }
    return Uint32Array.from(out);
  }

  /** The term id of a token as written: its lower case, interned. */
  readonly #termOf = (token: string): number => this.#intern(token.toLowerCase());

  #postingsNow(): Postings {
    if (this.#postings) return this.#postings;
    const n = this.#fieldCount;
    const termCount = this.#terms.length;
    const offsets = Array.from({ length: n }, () => new Uint32Array(termCount + 1));
    // Count each (field, term), then place the postings slot by slot: every list comes out in slot order.
    for (const entry of this.#entries) {
      if (!entry) continue;
      let at = n;
      for (let f = 0; f < n; f++) {
        const counts = offsets[f]!;
        const count = entry[at++]!;
        for (let i = 0; i < count; i++, at += 2) counts[entry[at]! + 1]!++;
      }
    }
    const docs: Uint32Array[] = [];
    const tfs: Uint32Array[] = [];
    for (const counts of offsets) {
      for (let t = 0; t < termCount; t++) counts[t + 1]! += counts[t]!;
      docs.push(new Uint32Array(counts[termCount]!));
      tfs.push(new Uint32Array(counts[termCount]!));
    }
    const next = offsets.map((o) => o.slice(0, termCount));
    this.#entries.forEach((entry, slot) => {
      if (!entry) return;
      let at = n;
      for (let f = 0; f < n; f++) {
        const fill = next[f]!;
        const count = entry[at++]!;
        for (let i = 0; i < count; i++, at += 2) {
          const p = fill[entry[at]!]!++;
          docs[f]![p] = slot;
          tfs[f]![p] = entry[at + 1]!;
        }
      }
    });
    this.#postings = { offsets, docs, tfs };
    return this.#postings;
  }

  #grow(slots: number): void {
    if (slots <= this.#scores.length) return;
    const capacity = Math.max(slots, this.#scores.length * 2, 64);
    const lengths = new Uint32Array(capacity * this.#fieldCount);
    lengths.set(this.#lengths);
    this.#lengths = lengths;
    this.#scores = new Float64Array(capacity);
    this.#matched = new Uint32Array(capacity);
    this.#lastTerm = new Int32Array(capacity);
  }
}

/** Whether `entry` is a well-formed entry for `fields` fields over a table of `terms` terms. */
function validEntry(entry: Uint32Array, fields: number, terms: number): boolean {
  let at = fields;
  for (let f = 0; f < fields; f++) {
    if (at >= entry.length) return false;
    const count = entry[at++]!;
    // A field has at least as many distinct tokens as written as it has terms (lower-cased).
    if (count > (entry.length - at) / 2 || entry[f]! < count) return false;
    for (let i = 0; i < count; i++, at += 2) if (entry[at]! >= terms || entry[at + 1] === 0) return false;
  }
  return at === entry.length;
}

/** The `k` highest scores seen, in a min-heap; ties go to the lower slot (the document indexed first). */
class TopK {
  readonly #k: number;
  readonly #heap: Array<{ score: number; slot: number }> = [];

  constructor(k: number) {
    this.#k = k;
  }

  /** Whether a document with this score would make the cut (checked before the caller's filter runs). */
  admits(score: number, slot: number): boolean {
    if (this.#heap.length < this.#k) return true;
    return worse(this.#heap[0]!, { score, slot });
  }

  add(score: number, slot: number): void {
    const heap = this.#heap;
    if (heap.length < this.#k) {
      heap.push({ score, slot });
      let i = heap.length - 1;
      while (i > 0) {
        const parent = (i - 1) >> 1;
        if (!worse(heap[i]!, heap[parent]!)) break;
        [heap[i], heap[parent]] = [heap[parent]!, heap[i]!];
        i = parent;
      }
      return;
    }
    heap[0] = { score, slot };
    let i = 0;
    for (;;) {
      const left = 2 * i + 1;
      const right = left + 1;
      let low = i;
      if (left < heap.length && worse(heap[left]!, heap[low]!)) low = left;
      if (right < heap.length && worse(heap[right]!, heap[low]!)) low = right;
      if (low === i) break;
      [heap[i], heap[low]] = [heap[low]!, heap[i]!];
      i = low;
    }
  }

  sorted(): Array<{ score: number; slot: number }> {
    return [...this.#heap].sort((a, b) => b.score - a.score || a.slot - b.slot);
  }
}

/** `a` ranks below `b`: a lower score, or the same score and a later slot. */
function worse(a: { score: number; slot: number }, b: { score: number; slot: number }): boolean {
  return a.score < b.score || (a.score === b.score && a.slot > b.slot);
}

/**
 * Tokens as written (surface forms), each with its term: an open-addressing table keyed by a hash of the
 * token's characters, so a token seen before is found by comparing characters in place, without the substring,
 * the Map lookup and the lower-casing a new string would cost (they were most of tokenizing 23 MB of concepts).
 * The distinct surface forms of a field (MiniSearch's field length) are counted by stamping them. The hash is
 * seeded per process and a probe is cut short after MAX_PROBE slots, falling back to a Map: text made to collide
 * costs a Map lookup per token, not a walk along one long chain.
 */
class SurfaceTable {
  readonly seed = (Math.random() * 0x100000000) >>> 0;
  readonly #strings: string[] = [];
  readonly #byString = new Map<string, number>();
  #hashes = new Int32Array(64);
  #terms = new Uint32Array(64);
  #stamps = new Uint32Array(64);
  #slots = new Int32Array(128);
  #stamp = 0;

  nextStamp(): number {
    if (this.#stamp === 0xffffffff) {
      this.#stamps.fill(0);
      this.#stamp = 0;
    }
    return ++this.#stamp;
  }

  /** Stamps a surface; true when it had not been stamped with `stamp` yet (first seen in this field). */
  stamp(surface: number, stamp: number): boolean {
    if (this.#stamps[surface] === stamp) return false;
    this.#stamps[surface] = stamp;
    return true;
  }

  term(surface: number): number {
    return this.#terms[surface]!;
  }

  /** The surface id of `text[start..end)` (whose hash is `hash`), added with its term when new. */
  find(text: string, start: number, end: number, hash: number, termOf: (token: string) => number): number {
    const slots = this.#slots;
    const mask = slots.length - 1;
    const length = end - start;
    let slot = hash & mask;
    for (let probe = 0; probe < MAX_PROBE; probe++) {
      const held = slots[slot]!;
      if (held === 0) return this.#add(text.slice(start, end), hash, slot, termOf);
      const surface = held - 1;
      if (this.#hashes[surface] === hash) {
        const known = this.#strings[surface]!;
        if (known.length === length) {
          let i = 0;
          while (i < length && known.charCodeAt(i) === text.charCodeAt(start + i)) i++;
          if (i === length) return surface;
        }
      }
      slot = (slot + 1) & mask;
    }
    const token = text.slice(start, end);
    return this.#byString.get(token) ?? this.#add(token, hash, -1, termOf);
  }

  #add(token: string, hash: number, slot: number, termOf: (token: string) => number): number {
    const existing = this.#byString.get(token);
    if (existing !== undefined) return existing;
    const surface = this.#strings.length;
    this.#strings.push(token);
    this.#byString.set(token, surface);
    if (surface >= this.#hashes.length) {
      const capacity = this.#hashes.length * 2;
      this.#hashes = grown(this.#hashes, capacity);
      this.#terms = grown(this.#terms, capacity);
      this.#stamps = grown(this.#stamps, capacity);
    }
    this.#hashes[surface] = hash;
    this.#terms[surface] = termOf(token);
    if (slot >= 0) this.#slots[slot] = surface + 1;
    // Kept at most half full; a grown table is refilled from the hashes kept.
    if ((this.#strings.length + 1) * 2 > this.#slots.length) this.#rehash(this.#slots.length * 2);
    return surface;
  }

  #rehash(size: number): void {
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let surface = 0; surface < this.#strings.length; surface++) {
      let slot = this.#hashes[surface]! & mask;
      for (let probe = 0; probe < MAX_PROBE && slots[slot] !== 0; probe++) slot = (slot + 1) & mask;
      if (slots[slot] === 0) slots[slot] = surface + 1;
    }
    this.#slots = slots;
  }
}

/** Slots a lookup tries before it asks the Map. */
const MAX_PROBE = 32;

function grown<T extends Int32Array | Uint32Array>(array: T, capacity: number): T {
  const next = new (array.constructor as new (n: number) => T)(capacity);
  next.set(array);
  return next;
}
