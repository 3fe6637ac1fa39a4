import { TackError } from '../errors.js';
import { snapshotEntry, type TextIndex } from '../util/text-index.js';
import { compareText } from '../util/text-order.js';
import { type KnowledgeBundle, type LoadBundleOptions, loadBundle, normalizeId } from './bundle.js';
import { newSearchIndex } from './bundle-cache.js';
import { type Concept, isStale } from './concept.js';
import { conceptUri } from './render.js';
import { type TrustTier, trustRank } from './trust-tier.js';

/** A bundle folder and, optionally, the name it is served under (default: the folder's name). */
export interface BundleRef {
  path: string;
  name?: string | undefined;
}

/** What loading every bundle shares: the cache folder and where its problems are reported. */
export type LoadOptions = Pick<LoadBundleOptions, 'cacheDir' | 'onWarning'>;

export function loadBundleRef(ref: string | BundleRef, options: LoadOptions = {}): Promise<KnowledgeBundle> {
  if (typeof ref === 'string') return loadBundle(ref, options);
  return loadBundle(ref.path, ref.name ? { ...options, name: ref.name } : options);
}

/** How many results, from which bundle, of which type, from which trust tier up. */
export interface SearchOptions {
  /** How many hits (default 5, at most 50). */
  k?: number;
  /** Only concepts of this type (case-insensitive). */
  type?: string;
  /** Only concepts at this tier or above. */
  minTrust?: TrustTier;
  /** Only this bundle. */
  bundle?: string;
  now?: number;
}

/** One search result: the concept, its bundle, its score and the facts to weigh it by. */
export interface KnowledgeHit {
  bundle: string;
  id: string;
  uri: string;
  title: string;
  type: string;
  description?: string;
  trust: TrustTier;
  status: Concept['status'];
  stale: boolean;
  score: number;
}

export const MAX_K = 50;

/**
 * Every bundle the host knows, searched as one: BM25+ as MiniSearch ranks (util/text-index.ts) over title,
 * description, tags and body, title boosted over description and tags over body; one bundle's own index is
 * searched as it is, several are merged into one so that their statistics are shared. Bundle names must be unique; a concept is addressed as
 * `<bundle>/<id>` or `okf://<bundle>/<id>`, or by its bare id when only one bundle has it.
 */
export class KnowledgeBase {
  readonly #bundles = new Map<string, KnowledgeBundle>();
  #index: TextIndex | undefined;

  constructor(bundles: Iterable<KnowledgeBundle> = []) {
    for (const bundle of bundles) this.add(bundle);
  }

  /** Loads bundle folders: paths, or `{ path, name }` as tack.json's `knowledge.bundles` lists them. */
  static async load(
    bundles: readonly (string | BundleRef)[],
    options: LoadOptions = {},
  ): Promise<KnowledgeBase> {
    return new KnowledgeBase(await Promise.all(bundles.map((ref) => loadBundleRef(ref, options))));
  }

  /** Adds a bundle (throws when one of that name is there). */
  add(bundle: KnowledgeBundle): void {
    if (this.#bundles.has(bundle.name))
      throw new TackError('KNOWLEDGE_BUNDLE', `two knowledge bundles are named "${bundle.name}"`, {
        subject: { file: bundle.root },
        hint: `Bundle names come from their folder names; give one a name ("name": "...") in tack.json knowledge.`,
      });
    this.#bundles.set(bundle.name, bundle);
    this.#index = undefined;
  }

  get bundles(): readonly KnowledgeBundle[] {
    return [...this.#bundles.values()];
  }

  /** A bundle by its name. */
  bundle(name: string): KnowledgeBundle | undefined {
    return this.#bundles.get(name);
  }

  get size(): number {
    let n = 0;
    for (const b of this.#bundles.values()) n += b.concepts.size;
    return n;
  }

  /**
   * Finds a concept by `okf://b/id`, `b/id` or a bare id; unknown or ambiguous ids say what to use instead. A URI
   * may be %-encoded (as conceptUri writes it, and as an MCP client's URL parser leaves it) or written raw.
   */
  resolve(ref: string): { bundle: KnowledgeBundle; concept: Concept } {
    const trimmed = ref.trim();
    const isUri = /^okf:\/\//i.test(trimmed);
    const written = trimmed.replace(/^okf:\/\//i, '');
    const forms = [...new Set([decodeUri(written), written])];
    let named: { bundle: KnowledgeBundle; id: string } | undefined;
    for (const text of forms) {
      const slash = text.indexOf('/');
      const bundle = slash > 0 ? this.#bundles.get(text.slice(0, slash)) : undefined;
      if (!bundle) continue;
      const id = text.slice(slash + 1);
      const concept = bundle.get(id);
      if (concept) return { bundle, concept };
      named ??= { bundle, id };
    }
    for (const text of forms) {
      const matches = this.bundles.flatMap((bundle) => {
        const concept = bundle.get(text);
        return concept ? [{ bundle, concept }] : [];
      });
      if (matches.length === 1) return matches[0]!;
      if (matches.length > 1)
        throw new TackError('UNKNOWN_CONCEPT', `"${ref}" is in ${matches.length} bundles`, {
          hint: `Name one: ${matches.map((m) => conceptUri(m.bundle.name, m.concept.id)).join(', ')}`,
        });
    }
    // The bundle is named: say what that bundle lacks, not that the whole "bundle/id" text is unknown.
    if (named) named.bundle.require(named.id);
    if (isUri)
      throw new TackError(
        'UNKNOWN_CONCEPT',
        `no knowledge bundle is named "${forms[0]!.split('/')[0]}" (in ${ref})`,
        { hint: `The bundles: ${this.bundles.map((b) => b.name).join(', ') || 'none'}.` },
      );
    if (this.#bundles.size === 1) this.bundles[0]!.require(forms[0]!);
    const tail = normalizeId(forms[0]!).split('/').pop()!.toLowerCase();
    const near = this.bundles
      .flatMap((b) =>
        [...b.concepts.keys()]
          .filter((k) => k.toLowerCase().includes(tail))
          .map((k) => conceptUri(b.name, k)),
      )
      .slice(0, 5);
    throw new TackError('UNKNOWN_CONCEPT', `no concept "${ref}" in ${this.#bundles.size} knowledge bundles`, {
      hint:
        near.length > 0 ? `Did you mean: ${near.join(', ')}?` : 'search_knowledge finds concepts by topic.',
    });
  }

  /** Ranks concepts of every bundle (or one) for a query, best first. */
  search(query: string, options: SearchOptions = {}): KnowledgeHit[] {
    const k = Math.max(1, Math.min(MAX_K, Math.trunc(Number.isFinite(options.k) ? options.k! : 5)));
    const now = options.now ?? Date.now();
    const type = options.type?.trim().toLowerCase();
    const min = options.minTrust === undefined ? 0 : trustRank(options.minTrust);
    const single = this.#bundles.size === 1 ? this.bundles[0] : undefined;
    const find = (key: string): { bundle: KnowledgeBundle; concept: Concept } => {
      if (single) return { bundle: single, concept: single.concepts.get(key)! };
      const cut = key.indexOf('\u0000');
      const bundle = this.#bundles.get(key.slice(0, cut))!;
      return { bundle, concept: bundle.concepts.get(key.slice(cut + 1))! };
    };
    const accept = (key: string) => {
      const { bundle, concept } = find(key);
      if (options.bundle && bundle.name !== options.bundle) return false;
      if (type && concept.type.toLowerCase() !== type) return false;
      return trustRank(concept.trust) >= min;
    };
    return this.#searchIndex()
      .search(query, k, accept)
      .map((hit) => {
        const { bundle, concept } = find(hit.key);
        return hitOf(bundle, concept, hit.score, now);
      });
  }

  /** One line per bundle for the model's context: size, trust mix, freshness, and what kinds of concept it holds. */
  summary(now: number = Date.now()): string {
    return this.bundles.map((b) => bundleSummary(b, now)).join('\n');
  }

  /** One bundle's own index (keys: ids), or the bundles' indexes merged (keys: `<bundle>\0<id>`). */
  #searchIndex(): TextIndex {
    if (this.#index) return this.#index;
    if (this.#bundles.size === 1) {
      this.#index = this.bundles[0]!.searchIndex();
      return this.#index;
    }
    const index = newSearchIndex();
    for (const bundle of this.#bundles.values()) {
      const snapshot = bundle.searchIndex().snapshot();
      const mapping = index.terms(snapshot.terms);
      snapshot.keys.forEach((id, i) => {
        const entry = snapshotEntry(snapshot, i);
        index.addEntry(`${bundle.name}\u0000${id}`, entry, mapping);
      });
    }
    this.#index = index;
    return index;
  }
}

/** %-escapes decoded; text that is not valid %-encoding (an id with a literal `%`) stays as written. */
function decodeUri(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function hitOf(bundle: KnowledgeBundle, concept: Concept, score: number, now: number): KnowledgeHit {
  return {
    bundle: bundle.name,
    id: concept.id,
    uri: conceptUri(bundle.name, concept.id),
    title: concept.title,
    type: concept.type,
    ...(concept.description ? { description: concept.description } : {}),
    trust: concept.trust,
    status: concept.status,
    stale: isStale(concept, now),
    score,
  };
}

export function bundleSummary(bundle: KnowledgeBundle, now: number): string {
  const concepts = [...bundle.concepts.values()];
  const count = (pred: (c: Concept) => boolean) => concepts.filter(pred).length;
  const types = new Map<string, number>();
  for (const c of concepts) types.set(c.type, (types.get(c.type) ?? 0) + 1);
  const topTypes = [...types]
    .sort((a, b) => b[1] - a[1] || compareText(a[0], b[0]))
    .slice(0, 6)
    .map(([t, n]) => `${t} ${n}`)
    .join(', ');
  const trust = (['human-reviewed', 'machine-confirmed', 'unverified'] as const)
    .map((t) => [t, count((c) => c.trust === t)] as const)
    .filter(([, n]) => n > 0)
    .map(([t, n]) => `${n} ${t}`)
    .join(', ');
  const flags = [
    count((c) => isStale(c, now)) && `${count((c) => isStale(c, now))} stale`,
    count((c) => c.status === 'deprecated') && `${count((c) => c.status === 'deprecated')} deprecated`,
    count((c) => c.status === 'draft') && `${count((c) => c.status === 'draft')} draft`,
  ].filter(Boolean);
  return `${bundle.name}: ${concepts.length} concepts (${trust}${flags.length ? `; ${flags.join(', ')}` : ''}); types: ${topTypes || 'none'}`;
}
