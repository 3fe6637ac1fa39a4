import { type NativeTool, type NativeToolTraits, nativeTool, ToolInputError } from '../tools/native.js';
import type { KnowledgeBase, KnowledgeHit } from './knowledge.js';
import { renderConcept } from './render.js';
import { isTrustTier, TRUST_TIERS } from './trust-tier.js';

export const SEARCH_KNOWLEDGE = 'search_knowledge';
export const READ_CONCEPT = 'read_concept';
export const RUN_COMPUTATION = 'run_computation';

/** Bundles hold the organisation's own data (metrics, tables, policies): a leg of the trifecta. */
export const KNOWLEDGE_TRAITS: NativeToolTraits = {
  capabilities: [{ capability: 'private-data', why: 'reads knowledge bundles' }],
};

export interface KnowledgeToolsOptions {
  /** The clock staleness is judged by (default Date.now). */
  now?: () => number;
}

/**
 * search_knowledge and read_concept as native tools: the model sees a one-line summary per bundle in its
 * context and reaches the rest through these. Every hit and every concept carries its type, trust tier, status
 * and staleness, so the model can weigh what it reads.
 */
export function knowledgeTools(base: KnowledgeBase, options: KnowledgeToolsOptions = {}): NativeTool[] {
  const now = options.now ?? Date.now;
  return [
    nativeTool(
      SEARCH_KNOWLEDGE,
      'Search the curated knowledge bundles (metrics, tables, policies, computations...) by topic. Each hit shows ' +
        'its type, trust tier (unverified < machine-confirmed < human-reviewed), status and staleness; read one ' +
        `with ${READ_CONCEPT}.`,
      {
        query: { type: 'string', description: 'What to look for, in words' },
        k: { type: 'integer', minimum: 1, maximum: 50, description: 'How many hits (default 5)' },
        type: { type: 'string', description: 'Only concepts of this type, e.g. "Metric"' },
        min_trust: {
          type: 'string',
          enum: [...TRUST_TIERS],
          description: 'Only concepts at this tier or above',
        },
      },
      ['query'],
      async (arg, input) => {
        const k = input.k;
        if (k !== undefined && (typeof k !== 'number' || !Number.isInteger(k) || k < 1))
          throw new ToolInputError(`${SEARCH_KNOWLEDGE}: "k" must be a positive integer`);
        if (input.min_trust !== undefined && !isTrustTier(input.min_trust))
          throw new ToolInputError(
            `${SEARCH_KNOWLEDGE}: "min_trust" must be one of ${TRUST_TIERS.join(', ')}`,
          );
        if (input.type !== undefined && typeof input.type !== 'string')
          throw new ToolInputError(`${SEARCH_KNOWLEDGE}: "type" must be a string`);
        const query = arg('query');
        const hits = base.search(query, {
          ...(typeof k === 'number' ? { k } : {}),
          ...(typeof input.type === 'string' ? { type: input.type } : {}),
          ...(isTrustTier(input.min_trust) ? { minTrust: input.min_trust } : {}),
          now: now(),
        });
        return formatHits(query, hits);
      },
      KNOWLEDGE_TRAITS,
    ),
    nativeTool(
      READ_CONCEPT,
      'Read one knowledge concept: its trust, status, staleness and sources, then its Markdown body.',
      {
        id: {
          type: 'string',
          description: 'okf://<bundle>/<id>, <bundle>/<id>, or an id from search_knowledge',
        },
      },
      ['id'],
      async (arg) => {
        const { bundle, concept } = base.resolve(arg('id'));
        return renderConcept(bundle, concept, now());
      },
      KNOWLEDGE_TRAITS,
    ),
  ];
}

/** Hits as the model reads them: one line each with the weighing facts, then the description. */
export function formatHits(query: string, hits: readonly KnowledgeHit[]): string {
  if (hits.length === 0) return `No concept matches "${query}". Try other words, or drop type / min_trust.`;
  return hits
    .map((h, i) => {
      const flags = [h.type, h.trust, h.status, h.stale ? 'STALE' : 'fresh'].join(' · ');
      return `${i + 1}. ${h.uri}: ${h.title} [${flags}]${h.description ? `\n   ${h.description}` : ''}`;
    })
    .join('\n');
}
