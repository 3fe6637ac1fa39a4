import type { KnowledgeBundle } from './bundle.js';
import { type Concept, isStale, lastVerified } from './concept.js';
import { encodePath } from './link-targets.js';
import type { TimeValue } from './time.js';

/**
 * `okf://<bundle>/<concept-id>`: how a concept is named to the model and as an MCP resource. Each part is
 * %-encoded, so an id with spaces, `?`, `#` or non-ASCII letters is still one valid URI that names it
 * (KnowledgeBase.resolve decodes it); plain ids read as they are.
 */
export function conceptUri(bundle: string, id: string): string {
  return `okf://${encodeURIComponent(bundle)}/${encodePath(id)}`;
}

/** A time value with the form it was written in, so a bare date is not mistaken for an instant. */
export function describeTime(value: TimeValue): string {
  const form =
    value.form === 'date'
      ? 'bare date, from 00:00 UTC'
      : value.form === 'datetime'
        ? 'datetime'
        : value.form === 'datetime-without-offset'
          ? 'datetime without offset, read as UTC'
          : 'unreadable';
  return `${value.raw} (${form})`;
}

/** One line: stale or fresh, with the instant; what a model needs to weigh the content. */
export function freshness(concept: Concept, now: number): string {
  if (!concept.staleAfter) return 'no stale_after';
  if (concept.staleAfter.instant === undefined) return `stale_after unreadable: ${concept.staleAfter.raw}`;
  return isStale(concept, now)
    ? `STALE since ${describeTime(concept.staleAfter)}: re-verify before relying on it`
    : `fresh until ${describeTime(concept.staleAfter)}`;
}

export function statusLine(concept: Concept): string {
  if (concept.status === 'deprecated')
    return 'deprecated: kept for history, not current; do not use for new work';
  if (concept.status === 'draft') return 'draft: not yet reviewed, possibly incomplete';
  return 'stable';
}

export function trustLine(concept: Concept): string {
  if (concept.verified.length === 0) return 'unverified (no one has confirmed it)';
  const latest = lastVerified(concept);
  const by = [...new Set(concept.verified.map((v) => v.by))].join(', ');
  return `${concept.trust} (verified by ${by}${latest ? `, latest ${describeTime(latest)}` : ''})`;
}

/**
 * What the model reads for one concept: the weighing facts first (type, trust tier, status, staleness,
 * provenance), then the body. The header comes before the body so that a long body cut by a caller still
 * carries them.
 */
export function renderConcept(bundle: KnowledgeBundle, concept: Concept, now: number = Date.now()): string {
  const lines = [
    `Concept: ${conceptUri(bundle.name, concept.id)}`,
    `Title: ${concept.title}`,
    `Type: ${concept.type}`,
    `Trust: ${trustLine(concept)}`,
    `Status: ${statusLine(concept)}`,
    `Freshness: ${freshness(concept, now)}`,
  ];
  if (concept.description) lines.push(`Description: ${concept.description}`);
  if (concept.resource) lines.push(`Resource: ${concept.resource}`);
  if (concept.tags.length > 0) lines.push(`Tags: ${concept.tags.join(', ')}`);
  if (concept.generated)
    lines.push(
      `Generated: by ${concept.generated.by}${concept.generated.at ? ` at ${describeTime(concept.generated.at)}` : ''}`,
    );
  if (concept.sources.length === 0) lines.push('Sources: none recorded');
  else {
    lines.push('Sources:');
    for (const s of concept.sources) {
      const signals = [
        s.author && `author ${s.author}`,
        s.usageCount !== undefined && `used ${s.usageCount} times`,
        s.lastModified && `last modified ${describeTime(s.lastModified)}`,
      ].filter(Boolean);
      lines.push(
        `  - ${s.id ? `[${s.id}] ` : ''}${s.title ? `${s.title}: ` : ''}${s.resource}${signals.length ? ` (${signals.join('; ')})` : ''}`,
      );
    }
  }
  const contract = concept.computation;
  if (contract) {
    const params = contract.parameters.map((p) => `${p.name}: ${p.type}${p.required ? '' : ' (optional)'}`);
    lines.push(
      `Computation: runtime ${contract.runtime ?? 'missing'}; parameters ${params.join(', ') || 'none'}; run it with run_computation, supplying only parameter values`,
    );
  }
  const out = bundle.outlinks(concept.id).filter((e) => e.toConcept);
  const back = bundle.backlinks(concept.id);
  if (out.length > 0) lines.push(`Links to: ${unique(out.map((e) => e.to)).join(', ')}`);
  if (back.length > 0) lines.push(`Linked from: ${unique(back.map((e) => e.from)).join(', ')}`);
  return `${lines.join('\n')}\n---\n${concept.body.replace(/^\n+/, '')}`;
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
