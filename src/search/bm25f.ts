/**
 * A field-aware BM25 (BM25F, Robertson and Zaragoza 2009) inverted index over pre-tokenized documents.
 *
 * Hand-written rather than MiniSearch, the library tack used before: MiniSearch scores each field with its own
 * BM25 and adds the results, so a word said once in the name and once in the description saturates twice; BM25F
 * adds the weighted, length-normalised term frequencies of all fields first and saturates once. Both are here
 * (`saturation`): the shipped ranking saturates per field, since joint saturation did not gain on the retrieval
 * sets left out (docs/tool-search.md, the feature table). It also has to hand back the term statistics that query
 * expansion reads (the terms of the best documents) and the fields each term matched (`tack tools search
 * --explain`), and score a query of 30 terms over 10,000 tools in well under a millisecond: typed arrays, dense
 * document ids and a reused score buffer. No npm package does BM25F with removals (wink-bm25-text-search is
 * build-once and unmaintained since 2023). Documents (docs, knowledge) are ranked by util/text-index.ts instead:
 * see there why tack keeps two engines.
 */

export interface Bm25fParams {
  /** Term-frequency saturation. */
  k1: number;
  /** Length normalisation of each field (0: none, 1: full). */
  b: number;
  /**
   * `joint` (BM25F): the fields' weighted frequencies are added, then saturated once. `per-field`: each field is
   * saturated on its own and the weighted results added (what MiniSearch does; kept for the ablation).
   */
  saturation?: 'joint' | 'per-field';
}

/** A query term with its weight (1 for the user's words, less for expansion terms). */
export interface WeightedTerm {
  term: string;
  weight: number;
  /** Added by query expansion: not counted by coordination, which is about the user's own words. */
  expansion?: boolean;
}

interface Posting {
  /** Document ids, in insertion order. */
  docs: number[];
  /** Term frequency per field: `tfs[i * fields + f]` for `docs[i]`. */
  tfs: number[];
}

interface DocEntry {
  /** Tokens per field, kept for query expansion and removal. */
  fields: readonly (readonly string[])[];
}

export class Bm25fIndex {
  readonly #fieldCount: number;
  readonly #postings = new Map<string, Posting>();
  readonly #docs = new Map<number, DocEntry>();
  /** Field lengths per document, `lengths[doc * fields + f]`; grown on demand. */
  #lengths = new Float64Array(0);
  readonly #totalLength: number[];
  /** Per-document score buffer, reused between queries; grown on demand. */
  #scores = new Float64Array(0);
  #matched = new Uint16Array(0);
  /** The documents the last score() matched, cleared at the next. */
  #touched: number[] = [];

  constructor(fieldCount: number) {
    this.#fieldCount = fieldCount;
    this.#totalLength = new Array<number>(fieldCount).fill(0);
  }

  get size(): number {
    return this.#docs.size;
  }

  has(doc: number): boolean {
    return this.#docs.has(doc);
  }

  /** Adds a document under a new id (ids are small non-negative integers: they index arrays). */
  add(doc: number, fields: readonly (readonly string[])[]): void {
    const n = this.#fieldCount;
    this.#grow(doc + 1);
    this.#docs.set(doc, { fields });
    const counts = new Map<string, number[]>();
    for (let f = 0; f < n; f++) {
      const tokens = fields[f] ?? [];
      this.#lengths[doc * n + f] = tokens.length;
      this.#totalLength[f]! += tokens.length;
      for (const token of tokens) {
        let tf = counts.get(token);
        if (!tf) {
          tf = new Array<number>(n).fill(0);
          counts.set(token, tf);
        }
        tf[f]!++;
      }
    }
    for (const [term, tf] of counts) {
      let posting = this.#postings.get(term);
      if (!posting) {
        posting = { docs: [], tfs: [] };
        this.#postings.set(term, posting);
      }
      posting.docs.push(doc);
      for (const value of tf) posting.tfs.push(value);
    }
  }

  /** Removes a document: the statistics are exactly those of an index that never had it. */
  remove(doc: number): void {
    const entry = this.#docs.get(doc);
    if (!entry) return;
    const n = this.#fieldCount;
    const terms = new Set<string>();
    for (let f = 0; f < n; f++) {
      this.#totalLength[f]! -= this.#lengths[doc * n + f]!;
      this.#lengths[doc * n + f] = 0;
      for (const token of entry.fields[f] ?? []) terms.add(token);
    }
    for (const term of terms) {
      const posting = this.#postings.get(term)!;
      const at = posting.docs.indexOf(doc);
      posting.docs.splice(at, 1);
      posting.tfs.splice(at * n, n);
      if (posting.docs.length === 0) this.#postings.delete(term);
    }
    this.#docs.delete(doc);
  }

  /** How many documents contain the term in any field. */
  documentFrequency(term: string): number {
    return this.#postings.get(term)?.docs.length ?? 0;
  }

  /** BM25's inverse document frequency, never negative. */
  idf(term: string): number {
    const df = this.documentFrequency(term);
    const total = this.#docs.size;
    return Math.log(1 + (total - df + 0.5) / (df + 0.5));
  }

  /** The document's tokens per field (as added). */
  fields(doc: number): readonly (readonly string[])[] | undefined {
    return this.#docs.get(doc)?.fields;
  }

  /**
   * Scores every document that holds at least one term: per term, the field frequencies weighted by `weights` and
   * normalised by each field's length, saturated once with k1, times the term's IDF and weight. `coordination`
   * (0 = off, 1 = linear) multiplies a document's score by the share of query terms it matched, raised to that
   * power, so a document that matches one frequent word of a long request does not outrank one that matches
   * three. Returns the matched documents (unsorted) and a buffer of scores by document id, valid until the next
   * call: no object per matched document, which at 10,000 tools is most of a search's time.
   */
  score(
    terms: readonly WeightedTerm[],
    weights: readonly number[],
    params: Bm25fParams,
    coordination = 0,
  ): { docs: readonly number[]; scores: Float64Array } {
    const n = this.#fieldCount;
    const total = this.#docs.size;
    const scores = this.#scores;
    const matched = this.#matched;
    // The previous call's documents are cleared here rather than there: its caller was still reading them.
    for (const doc of this.#touched) {
      scores[doc] = 0;
      matched[doc] = 0;
    }
    const touched: number[] = [];
    this.#touched = touched;
    if (total === 0 || terms.length === 0) return { docs: touched, scores };
    const avg = this.#totalLength.map((length) => (length > 0 ? length / total : 1));
    const lengths = this.#lengths;
    const { k1, b } = params;
    const joint = params.saturation !== 'per-field';
    for (const { term, weight, expansion } of terms) {
      const posting = this.#postings.get(term);
      if (!posting || weight === 0) continue;
      const idf = Math.log(1 + (total - posting.docs.length + 0.5) / (posting.docs.length + 0.5));
      const { docs, tfs } = posting;
      for (let i = 0; i < docs.length; i++) {
        const doc = docs[i]!;
        let tf = 0;
        let saturated = 0;
        for (let f = 0; f < n; f++) {
          const raw = tfs[i * n + f]!;
          if (raw === 0 || weights[f] === 0) continue;
          const norm = 1 - b + (b * lengths[doc * n + f]!) / avg[f]!;
          if (joint) tf += (weights[f]! * raw) / norm;
          else saturated += (weights[f]! * raw) / (k1 * norm + raw);
        }
        if (tf === 0 && saturated === 0) continue;
        if (scores[doc] === 0) touched.push(doc);
        scores[doc]! += weight * idf * (joint ? tf / (k1 + tf) : saturated);
        if (!expansion) matched[doc]!++;
      }
    }
    if (coordination > 0) {
      const queryTerms = terms.filter((t) => !t.expansion).length || 1;
      for (const doc of touched) scores[doc]! *= (Math.max(matched[doc]!, 0.5) / queryTerms) ** coordination;
    }
    return { docs: touched, scores };
  }

  /** Which fields of a document hold the term (for explanations). */
  fieldsWith(doc: number, term: string): number[] {
    const posting = this.#postings.get(term);
    if (!posting) return [];
    const at = posting.docs.indexOf(doc);
    if (at < 0) return [];
    const out: number[] = [];
    for (let f = 0; f < this.#fieldCount; f++) if (posting.tfs[at * this.#fieldCount + f]! > 0) out.push(f);
    return out;
  }

  #grow(size: number): void {
    if (size <= this.#scores.length) return;
    const capacity = Math.max(size, this.#scores.length * 2, 64);
    const lengths = new Float64Array(capacity * this.#fieldCount);
    lengths.set(this.#lengths);
    this.#lengths = lengths;
    // Grown between searches only (add() is never called while a caller reads the buffer).
    const scores = new Float64Array(capacity);
    scores.set(this.#scores);
    this.#scores = scores;
    const matched = new Uint16Array(capacity);
    matched.set(this.#matched);
    this.#matched = matched;
  }
}
