import { TackError } from '../errors.js';
import type { ComputationOutcome } from '../knowledge/attest/run.js';
import type { KnowledgeBundle } from '../knowledge/bundle.js';
import { isStale, lastVerified } from '../knowledge/concept.js';
import { type GraphEdge, type GraphNode, graphJson } from '../knowledge/graph.js';
import { formatKnowledgeIssue } from '../knowledge/issues.js';
import type { KnowledgeBase } from '../knowledge/knowledge.js';
import { conceptUri, renderConcept } from '../knowledge/render.js';
import { type ComputationRuntimes, runNamedComputation } from '../knowledge/runtimes.js';
import { argumentsOf, type Route, requiredString } from './routes.js';

/** Nodes the page draws at once: a graph library lays out a few hundred nodes in well under a frame budget. */
export const MAX_GRAPH_NODES = 300;

export function bundleSummaries(base: KnowledgeBase | undefined, now = Date.now()) {
  return (base?.bundles ?? []).map((bundle) => {
    const tiers: Record<string, number> = {};
    let stale = 0;
    let computations = 0;
    for (const concept of bundle.concepts.values()) {
      tiers[concept.trust] = (tiers[concept.trust] ?? 0) + 1;
      if (isStale(concept, now)) stale++;
      if (concept.computation) computations++;
    }
    return {
      name: bundle.name,
      root: bundle.root,
      concepts: bundle.concepts.size,
      edges: bundle.edges.length,
      tiers,
      stale,
      computations,
      errors: bundle.errors,
      issues: bundle.issues.slice(0, 50).map((issue) => formatKnowledgeIssue(issue)),
    };
  });
}

function bundleOf(base: KnowledgeBase | undefined, name: string): KnowledgeBundle {
  const bundle = base?.bundle(name);
  if (!bundle)
    throw new TackError('KNOWLEDGE_BUNDLE', `no bundle named ${name}`, { hint: 'Pick one from the list.' });
  return bundle;
}

/**
 * The bundle's link graph, or the part of it around `focus` when the whole is larger than the page can draw:
 * the focus and its neighbours breadth-first until MAX_GRAPH_NODES, else the best-linked concepts. `total`
 * says how many there are, so the page can say what it leaves out.
 */
export function bundleGraph(base: KnowledgeBase | undefined, name: string, focus?: string) {
  const bundle = bundleOf(base, name);
  const { graph, neighbours, byDegree } = graphOf(bundle);
  const total = { nodes: graph.nodes.length, edges: graph.edges.length };
  if (graph.nodes.length <= MAX_GRAPH_NODES) return { ...graph, total, focus };
  const start = focus && bundle.concepts.has(focus) ? focus : (byDegree[0] ?? graph.nodes[0]?.id);
  const kept = new Set<string>();
  const queue = start ? [start] : [];
  for (let i = 0; i < queue.length && kept.size < MAX_GRAPH_NODES; i++) {
    const id = queue[i]!;
    if (kept.has(id)) continue;
    kept.add(id);
    for (const next of neighbours.get(id) ?? []) if (!kept.has(next)) queue.push(next);
  }
  for (const id of byDegree) {
    if (kept.size >= MAX_GRAPH_NODES) break;
    kept.add(id);
  }
  const nodes: GraphNode[] = graph.nodes.filter((n) => kept.has(n.id));
  const edges: GraphEdge[] = graph.edges.filter((e) => kept.has(e.from) && kept.has(e.to));
  return { bundle: graph.bundle, nodes, edges, total, focus: start };
}

interface GraphIndex {
  graph: ReturnType<typeof graphJson>;
  neighbours: Map<string, string[]>;
  /** Concept ids, best-linked first. */
  byDegree: string[];
}

/**
 * A bundle does not change while the console runs (it is loaded once), so its graph and adjacency are built once:
 * a 10,000-concept bundle's graph costs about a second to build, a neighbourhood of it a few milliseconds.
 */
const graphs = new WeakMap<KnowledgeBundle, GraphIndex>();

function graphOf(bundle: KnowledgeBundle): GraphIndex {
  let index = graphs.get(bundle);
  if (index) return index;
  const graph = graphJson(bundle);
  const neighbours = new Map<string, string[]>();
  const add = (from: string, to: string) => {
    const list = neighbours.get(from);
    if (list) list.push(to);
    else neighbours.set(from, [to]);
  };
  for (const edge of graph.edges) {
    add(edge.from, edge.to);
    add(edge.to, edge.from);
  }
  const byDegree = [...neighbours.keys()].sort(
    (a, b) => (neighbours.get(b)?.length ?? 0) - (neighbours.get(a)?.length ?? 0),
  );
  for (const node of graph.nodes) if (!neighbours.has(node.id)) byDegree.push(node.id);
  index = { graph, neighbours, byDegree };
  graphs.set(bundle, index);
  return index;
}

/** Concept ids and titles matching `query` (for the page's search box on large bundles). */
export function findConcepts(base: KnowledgeBase | undefined, name: string, query: string, limit = 50) {
  const bundle = bundleOf(base, name);
  const q = query.trim().toLowerCase();
  const out: Array<{ id: string; title: string; type: string; trust: string }> = [];
  for (const concept of bundle.concepts.values()) {
    if (out.length >= limit) break;
    if (!q || concept.id.toLowerCase().includes(q) || concept.title.toLowerCase().includes(q))
      out.push({ id: concept.id, title: concept.title, type: concept.type, trust: concept.trust });
  }
  return out;
}

/** One concept: the text the model reads (renderConcept), its provenance fields, its links and its contract. */
export function conceptDetail(base: KnowledgeBase | undefined, name: string, id: string, now = Date.now()) {
  const bundle = bundleOf(base, name);
  const concept = bundle.get(id);
  if (!concept)
    throw new TackError('UNKNOWN_CONCEPT', `no concept ${id} in ${name}`, { hint: 'Pick one in the graph.' });
  const verified = lastVerified(concept);
  return {
    bundle: name,
    id: concept.id,
    path: concept.path,
    title: concept.title,
    type: concept.type,
    description: concept.description,
    trust: concept.trust,
    status: concept.status,
    stale: isStale(concept, now),
    staleAfter: concept.staleAfter?.raw,
    generated: concept.generated,
    verified: concept.verified,
    lastVerified: verified?.raw,
    sources: concept.sources,
    tags: concept.tags,
    resource: concept.resource,
    computation: concept.computation,
    body: concept.body,
    rendered: renderConcept(bundle, concept, now),
    outlinks: bundle.outlinks(concept.id).map((e) => ({ to: e.to, kind: e.kind })),
    backlinks: bundle.backlinks(concept.id).map((e) => ({ from: e.from, kind: e.kind })),
  };
}

/** Computations the page lists at once; a filter finds the others. */
export const MAX_COMPUTATIONS = 100;

/** The Attested Computations of a bundle, with their contracts (the first MAX_COMPUTATIONS matching `query`). */
export function computations(base: KnowledgeBase | undefined, name: string, query = '') {
  const bundle = bundleOf(base, name);
  const q = query.toLowerCase();
  const all = [...bundle.concepts.values()].filter(
    (c) => c.computation && (!q || `${c.id} ${c.title}`.toLowerCase().includes(q)),
  );
  return {
    total: all.length,
    list: all
      .slice(0, MAX_COMPUTATIONS)
      .map((c) => ({ bundle: name, id: c.id, title: c.title, trust: c.trust, contract: c.computation! })),
  };
}

/**
 * Runs a computation on the configured runtimes (as run_computation does) and returns its outcome: the attested
 * value with its receipt, or the refusal with the receipt that did not attest.
 */
export async function runComputationFor(
  base: KnowledgeBase | undefined,
  runtimes: ComputationRuntimes | undefined,
  name: string,
  id: string,
  values: Record<string, unknown>,
): Promise<ComputationOutcome> {
  bundleOf(base, name);
  if (!base || !runtimes || runtimes.executors.length === 0)
    throw new TackError('COMPUTATION_FAILED', 'no computation runtime is configured', {
      hint: 'Set knowledge.runtimes in tack.json (sqlite or postgres).',
    });
  return runNamedComputation(base, runtimes, conceptUri(name, id), values);
}

/** A GET on one bundle answered from the loaded bundles and one query parameter (absent: undefined). */
function bundleQuery(
  action: string,
  key: string,
  answer: (base: KnowledgeBase | undefined, bundle: string, value: string | undefined) => unknown,
): Route {
  return {
    method: 'GET',
    path: `knowledge/:bundle/${action}`,
    json: async ({ context, params, query }) =>
      answer(await context.knowledge(), params.bundle!, query.get(key) ?? undefined),
  };
}

/** The knowledge page: the bundles, a bundle's graph, search and concepts, its computations and running one. */
export const knowledgeRoutes: Route[] = [
  {
    method: 'GET',
    path: 'knowledge',
    json: async ({ context }) => ({ bundles: bundleSummaries(await context.knowledge()) }),
  },
  bundleQuery('computations', 'q', (base, bundle, q) => computations(base, bundle, q ?? '')),
  bundleQuery('graph', 'focus', (base, bundle, focus) => bundleGraph(base, bundle, focus)),
  bundleQuery('search', 'q', (base, bundle, q) => findConcepts(base, bundle, q ?? '')),
  bundleQuery('concept', 'id', (base, bundle, id) => conceptDetail(base, bundle, id ?? '')),
  {
    method: 'POST',
    path: 'knowledge/:bundle/run',
    async json({ context, params, body }) {
      const base = await context.knowledge();
      const fields = await body();
      const id = requiredString(fields, 'id');
      const values = argumentsOf(fields.values);
      return runComputationFor(base, await context.runtimes(), params.bundle!, id, values);
    },
  },
];
