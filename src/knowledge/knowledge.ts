import MiniSearch from 'minisearch';
import { TackError } from '../errors.js';
import { type KnowledgeBundle, loadBundle, normalizeId } from './bundle.js';
import { type Concept, isStale } from './concept.js';
import { conceptUri } from './render.js';
import { type TrustTier, trustRank } from './trust-tier.js';

/** A bundle folder and, optionally, the name it is served under (default: the folder's name). */
export interface BundleRef {
  path: string;
  name?: string | undefined;
}

export function loadBundleRef(ref: string | BundleRef): Promise<KnowledgeBundle> {
  if (typeof ref === 'string') return loadBundle(ref);
  return loadBundle(ref.path, ref.name ? { name: ref.name } : {});
}

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

interface Doc {
  id: string;
  title: string;
  description: string;
  tags: string;
  body: string;
}

/**
 * Every bundle the host knows, searched as one: BM25 (MiniSearch) over title, description, tags and body, title
 * boosted over description and tags over body. Bundle names must be unique; a concept is addressed as
 * `<bundle>/<id>` or `okf://<bundle>/<id>`, or by its bare id when only one bundle has it.
 */
export class KnowledgeBase {
  readonly #bundles = new Map<string, KnowledgeBundle>();
  #index: MiniSearch<Doc> | undefined;

  constructor(bundles: Iterable<KnowledgeBundle> = []) {
    for (const bundle of bundles) this.add(bundle);
  }

  /** Loads bundle folders: paths, or `{ path, name }` as tack.json's `knowledge.bundles` lists them. */
  static async load(bundles: readonly (string | BundleRef)[]): Promise<KnowledgeBase> {
    return new KnowledgeBase(await Promise.all(bundles.map(loadBundleRef)));
  }

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

  search(query: string, options: SearchOptions = {}): KnowledgeHit[] {
    const k = Math.max(1, Math.min(MAX_K, Math.trunc(options.k ?? 5)));
    const now = options.now ?? Date.now();
    const type = options.type?.trim().toLowerCase();
    const min = options.minTrust === undefined ? 0 : trustRank(options.minTrust);
    const hits: KnowledgeHit[] = [];
    for (const result of this.#searchIndex().search(query)) {
      const key = result.id as string;
      const cut = key.indexOf('\u0000');
      const bundle = this.#bundles.get(key.slice(0, cut))!;
      const concept = bundle.concepts.get(key.slice(cut + 1))!;
      if (options.bundle && bundle.name !== options.bundle) continue;
      if (type && concept.type.toLowerCase() !== type) continue;
      if (trustRank(concept.trust) < min) continue;
      hits.push(hitOf(bundle, concept, result.score, now));
      if (hits.length === k) break;
    }
    return hits;
  }

  /** One line per bundle for the model's context: size, trust mix, freshness, and what kinds of concept it holds. */
  summary(now: number = Date.now()): string {
    return this.bundles.map((b) => bundleSummary(b, now)).join('\n');
  }

  #searchIndex(): MiniSearch<Doc> {
    if (this.#index) return this.#index;
    const index = new MiniSearch<Doc>({
      fields: ['title', 'description', 'tags', 'body'],
      searchOptions: { boost: { title: 3, description: 2, tags: 2 }, combineWith: 'OR', prefix: false },
    });
    const docs: Doc[] = [];
    for (const bundle of this.#bundles.values()) {
      for (const c of bundle.concepts.values()) {
        docs.push({
          id: `${bundle.name}\u0000${c.id}`,
          title: `${c.title} ${c.id.replace(/[/_-]+/g, ' ')}`,
          description: c.description ?? '',
          tags: c.tags.join(' '),
          body: c.body,
        });
      }
    }
    index.addAll(docs);
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
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
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
