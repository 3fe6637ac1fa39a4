import type { Core } from 'cytoscape';
import { useEffect, useRef, useState } from 'preact/hooks';
import { post, q } from '../api';
import { Json, Load, Markdown } from '../components';
import { href, useApi } from '../hooks';
import { labelsToShow } from '../labels';

interface Bundle {
  name: string;
  root: string;
  concepts: number;
  edges: number;
  tiers: Record<string, number>;
  stale: number;
  computations: number;
  errors: number;
  issues: string[];
}

interface Computation {
  bundle: string;
  id: string;
  title: string;
  trust: string;
  contract: {
    runtime?: string;
    parameters: Array<{ name: string; type: string; description?: string }>;
    [key: string]: unknown;
  };
}

interface Graph {
  bundle: string;
  nodes: Array<{ id: string; title: string; type: string; trust: string; status: string; stale: boolean }>;
  edges: Array<{ from: string; to: string; kind: string }>;
  total: { nodes: number; edges: number };
  focus?: string;
}

interface ConceptView {
  id: string;
  title: string;
  type: string;
  description?: string;
  trust: string;
  status: string;
  stale: boolean;
  staleAfter?: string;
  lastVerified?: string;
  generated?: unknown;
  verified: unknown[];
  sources: unknown[];
  tags: string[];
  resource?: string;
  computation?: unknown;
  body: string;
  outlinks: Array<{ to: string; kind: string }>;
  backlinks: Array<{ from: string; kind: string }>;
}

/** Trust tiers as colours: the reader sees at a glance how much of a bundle anyone has checked. */
export const TIER_COLOURS: Record<string, string> = {
  unverified: '#c9ccd4',
  'machine-confirmed': '#6fa8dc',
  'human-reviewed': '#3c9a5f',
};

export function KnowledgePage(props: { bundle?: string; concept?: string }) {
  const load = useApi<{ bundles: Bundle[] }>('/knowledge');
  return (
    <Load load={load}>
      {(data) => {
        const current = props.bundle ?? data.bundles[0]?.name;
        return (
          <>
            <h1>Knowledge</h1>
            {data.bundles.length === 0 && (
              <p class="muted">No bundles: list them under knowledge.bundles in tack.json.</p>
            )}
            <div class="tabs">
              {data.bundles.map((b) => (
                <a
                  key={b.name}
                  class={b.name === current ? 'tab active' : 'tab'}
                  href={href('knowledge', b.name)}
                >
                  {b.name} <small>{b.concepts}</small>
                </a>
              ))}
            </div>
            {data.bundles
              .filter((b) => b.name === current)
              .map((b) => (
                <BundleView key={b.name} bundle={b} concept={props.concept} />
              ))}
            {current && <Computations bundle={current} />}
          </>
        );
      }}
    </Load>
  );
}

function BundleView(props: { bundle: Bundle; concept: string | undefined }) {
  const { bundle } = props;
  const verified = (bundle.tiers['machine-confirmed'] ?? 0) + (bundle.tiers['human-reviewed'] ?? 0);
  return (
    <>
      <p data-testid="bundle-summary">
        {bundle.concepts} concepts, {bundle.edges} links · {verified} verified (
        {bundle.concepts ? Math.round((100 * verified) / bundle.concepts) : 0} %) · {bundle.stale} stale ·{' '}
        {bundle.computations} computations{' '}
        {bundle.errors > 0 && <span class="error">· {bundle.errors} errors</span>}
      </p>
      <p class="legend">
        {Object.entries(TIER_COLOURS).map(([tier, colour]) => (
          <span key={tier} class={`swatch tier-${tier}`}>
            <i class="dot" title={colour} /> {tier} {bundle.tiers[tier] ?? 0}
          </span>
        ))}
        <span class="swatch stale">stale (red border)</span>
      </p>
      <div class="knowledge">
        <GraphView bundle={bundle.name} focus={props.concept} />
        <div class="concept-pane">
          {props.concept ? (
            <ConceptPane bundle={bundle.name} id={props.concept} />
          ) : (
            <p class="muted">Click a concept in the graph.</p>
          )}
        </div>
      </div>
    </>
  );
}

function GraphView(props: { bundle: string; focus: string | undefined }) {
  const container = useRef<HTMLDivElement>(null);
  const cyRef = useRef<Core | undefined>(undefined);
  const [search, setSearch] = useState('');
  // The graph is fetched around a concept only when the one drawn does not hold it (large bundles).
  const [around, setAround] = useState(props.focus);
  const load = useApi<Graph>(`/knowledge/${q(props.bundle)}/graph${around ? `?focus=${q(around)}` : ''}`);
  useEffect(() => {
    const cy = cyRef.current;
    if (!props.focus) return;
    if (load.data && !load.data.nodes.some((n) => n.id === props.focus)) {
      setAround(props.focus);
      return;
    }
    if (cy) {
      cy.nodes('.focus').removeClass('focus');
      cy.getElementById(props.focus).addClass('focus');
    }
  }, [props.focus, load.data]);
  const found = useApi<Array<{ id: string; title: string }>>(
    search ? `/knowledge/${q(props.bundle)}/search?q=${q(search)}` : undefined,
  );
  const graph = load.data;
  const [drawn, setDrawn] = useState(false);
  useEffect(() => {
    if (!graph || !container.current) return;
    let cy: Core | undefined;
    let live = true;
    // Cytoscape is loaded with the first graph: pages without one never pay for it.
    void import('cytoscape').then(({ default: cytoscape }) => {
      if (!live || !container.current) return;
      markCytoscapeStylesheet();
      const large = graph.nodes.length > 80;
      cy = cytoscape({
        container: container.current,
        elements: [
          ...graph.nodes.map((n) => ({
            data: {
              id: n.id,
              label: n.title,
              trust: n.trust,
              stale: n.stale ? 1 : 0,
              deprecated: n.status === 'deprecated' ? 1 : 0,
            },
          })),
          ...graph.edges.map((e, i) => ({
            data: { id: `e${i}`, source: e.from, target: e.to, kind: e.kind },
          })),
        ],
        style: [
          {
            selector: 'node',
            style: {
              // A large graph's labels are not laid out at all (measuring 300 of them is most of the draw);
              // the one under the pointer is shown (node.hover below).
              label: large ? '' : 'data(label)',
              'font-size': 10,
              'text-valign': 'bottom',
              'text-wrap': 'ellipsis',
              'text-max-width': '120px',
              width: 14,
              height: 14,
              'background-color': TIER_COLOURS.unverified!,
            },
          },
          ...Object.entries(TIER_COLOURS).map(([tier, colour]) => ({
            selector: `node[trust = "${tier}"]`,
            style: { 'background-color': colour },
          })),
          { selector: 'node[stale = 1]', style: { 'border-width': 3, 'border-color': '#d0312d' } },
          {
            selector: 'node[deprecated = 1]',
            style: { 'border-style': 'dashed', 'border-width': 2, 'border-color': '#555' },
          },
          { selector: 'node.focus', style: { width: 22, height: 22 } },
          // A label that would overlap another (or another node) is left out; it shows under the pointer.
          { selector: 'node.quiet', style: { label: '' } },
          { selector: 'node.hover', style: { label: 'data(label)', 'z-index': 10 } },
          {
            selector: 'edge',
            style: {
              width: 1,
              'line-color': '#b5b9c4',
              'target-arrow-shape': 'triangle',
              'target-arrow-color': '#b5b9c4',
              // Haystack edges are drawn as straight lines in one pass: what keeps 300 nodes fast.
              'curve-style': large ? 'haystack' : 'bezier',
            },
          },
        ],
        layout: { name: 'preset' },
      });
      if (props.focus) cy.getElementById(props.focus).addClass('focus');
      // A force layout reads well for a few dozen concepts, spaced by their labels; past that a concentric one is
      // drawn in one pass.
      const layout = cy.layout(
        large
          ? { name: 'concentric', animate: false, minNodeSpacing: 4 }
          : {
              name: 'cose',
              animate: false,
              nodeDimensionsIncludeLabels: true,
              padding: 20,
              // The box the graph is drawn in: a layout of its shape is fitted without shrinking its labels.
              boundingBox: {
                x1: 0,
                y1: 0,
                w: container.current.clientWidth,
                h: container.current.clientHeight,
              },
            },
      );
      const drawnCy = cy;
      layout.one('layoutstop', () => {
        if (!large && container.current) declutter(drawnCy, container.current, props.focus);
      });
      layout.run();
      cyRef.current = cy;
      cy.on('mouseover', 'node', (event) => event.target.addClass('hover'));
      cy.on('mouseout', 'node', (event) => event.target.removeClass('hover'));
      cy.on('tap', 'node', (event) => {
        location.hash = href('knowledge', props.bundle, String(event.target.id()));
      });
      setDrawn(true);
    });
    return () => {
      live = false;
      cy?.destroy();
      cyRef.current = undefined;
    };
  }, [graph, props.bundle]);
  return (
    <div class="graph-pane">
      <div class="toolbar">
        <input
          type="search"
          aria-label="find a concept"
          placeholder="find a concept"
          value={search}
          onInput={(e) => setSearch((e.target as HTMLInputElement).value)}
        />
        {graph && graph.total.nodes > graph.nodes.length && (
          <span class="muted small">
            showing {graph.nodes.length} of {graph.total.nodes} concepts around {graph.focus}
          </span>
        )}
      </div>
      {search && found.data && (
        <ul class="found">
          {found.data.slice(0, 20).map((c) => (
            <li key={c.id}>
              <a href={href('knowledge', props.bundle, c.id)}>{c.title}</a>{' '}
              <small class="muted">{c.id}</small>
            </li>
          ))}
        </ul>
      )}
      {load.error && <p class="error">{load.error.message}</p>}
      <div ref={container} class="graph" data-testid="graph" data-drawn={drawn ? 'yes' : 'no'} />
    </div>
  );
}

function ConceptPane(props: { bundle: string; id: string }) {
  const load = useApi<ConceptView>(`/knowledge/${q(props.bundle)}/concept?id=${q(props.id)}`);
  return (
    <Load load={load}>
      {(c) => (
        <article data-testid="concept">
          <h2>{c.title}</h2>
          <p>
            <code>{c.id}</code> · {c.type} · <span class={`label tier-${c.trust}`}>{c.trust}</span> ·{' '}
            {c.status}
            {c.stale && <span class="label stale-label">stale since {c.staleAfter}</span>}
          </p>
          {c.description && <p>{c.description}</p>}
          <h3>Provenance</h3>
          <dl class="provenance">
            <dt>verified</dt>
            <dd>{c.verified.length > 0 ? <Json value={c.verified} /> : 'never'}</dd>
            {c.lastVerified && (
              <>
                <dt>last verified</dt>
                <dd>{c.lastVerified}</dd>
              </>
            )}
            {c.generated !== undefined && (
              <>
                <dt>generated</dt>
                <dd>
                  <Json value={c.generated} />
                </dd>
              </>
            )}
            <dt>sources</dt>
            <dd>{c.sources.length > 0 ? <Json value={c.sources} /> : 'none'}</dd>
            {c.resource && (
              <>
                <dt>resource</dt>
                <dd>{c.resource}</dd>
              </>
            )}
            {c.tags.length > 0 && (
              <>
                <dt>tags</dt>
                <dd>{c.tags.join(', ')}</dd>
              </>
            )}
          </dl>
          {c.computation !== undefined && (
            <>
              <h3>Computation contract</h3>
              <Json value={c.computation} />
            </>
          )}
          <h3>Body</h3>
          <Markdown text={c.body} />
          <h3>Links</h3>
          <ul>
            {c.outlinks.map((l) => (
              <li key={`o${l.to}${l.kind}`}>
                → <a href={href('knowledge', props.bundle, l.to)}>{l.to}</a>{' '}
                <small class="muted">{l.kind}</small>
              </li>
            ))}
            {c.backlinks.map((l) => (
              <li key={`b${l.from}${l.kind}`}>
                ← <a href={href('knowledge', props.bundle, l.from)}>{l.from}</a>{' '}
                <small class="muted">{l.kind}</small>
              </li>
            ))}
          </ul>
        </article>
      )}
    </Load>
  );
}

const SHOWN_COMPUTATIONS = 20;

function Computations(props: { bundle: string }) {
  const [filter, setFilter] = useState('');
  const load = useApi<{ total: number; list: Computation[] }>(
    `/knowledge/${q(props.bundle)}/computations?q=${q(filter)}`,
  );
  if (!load.data || (load.data.total === 0 && !filter)) return null;
  const { total, list } = load.data;
  return (
    <>
      <h2>Attested computations</h2>
      {(total > SHOWN_COMPUTATIONS || filter) && (
        <div class="toolbar">
          <input
            type="search"
            aria-label="filter computations"
            placeholder="filter computations"
            value={filter}
            onInput={(e) => setFilter((e.target as HTMLInputElement).value)}
          />
          <span class="muted small">
            {Math.min(SHOWN_COMPUTATIONS, total)} of {total} shown
          </span>
        </div>
      )}
      {list.slice(0, SHOWN_COMPUTATIONS).map((c) => (
        <ComputationRow key={`${c.bundle}/${c.id}`} computation={c} />
      ))}
    </>
  );
}

function ComputationRow(props: { computation: Computation }) {
  const c = props.computation;
  const [values, setValues] = useState<Record<string, string>>({});
  const [outcome, setOutcome] = useState<unknown>();
  const [error, setError] = useState<string>();
  return (
    <section class="computation" data-testid="computation">
      <h3>
        <a href={href('knowledge', c.bundle, c.id)}>{c.title}</a>{' '}
        <small class="muted">{c.contract.runtime ?? 'no runtime'}</small>
      </h3>
      <form
        class="inline-form"
        onSubmit={async (event) => {
          event.preventDefault();
          setError(undefined);
          try {
            const typed = Object.fromEntries(
              c.contract.parameters.map((p) => {
                const v = values[p.name] ?? '';
                return [p.name, p.type === 'integer' || p.type === 'number' ? Number(v) : v];
              }),
            );
            setOutcome(await post(`/knowledge/${q(c.bundle)}/run`, { id: c.id, values: typed }));
          } catch (e) {
            setError((e as Error).message);
          }
        }}
      >
        {c.contract.parameters.map((p) => (
          <label key={p.name}>
            {p.name} <small class="muted">{p.type}</small>{' '}
            <input
              onInput={(e) => setValues({ ...values, [p.name]: (e.target as HTMLInputElement).value })}
            />
          </label>
        ))}
        <button type="submit">Run</button>
      </form>
      {error && <p class="error">{error}</p>}
      {outcome !== undefined && (
        <>
          <h4>Outcome and receipt</h4>
          <Json value={outcome} />
        </>
      )}
    </section>
  );
}

/**
 * Cytoscape puts a `<style>` element in the page on its first draw (`.__________cytoscape_container { position:
 * relative }`) unless an element of its id exists; the console's CSP (style-src 'self') refuses inline styles, so
 * the rule is in style.css and a marker element stands in for the one it would add.
 */
function markCytoscapeStylesheet(): void {
  const id = '__________cytoscape_stylesheet';
  if (document.getElementById(id)) return;
  const marker = document.createElement('meta');
  marker.id = id;
  document.head.append(marker);
}

/**
 * Leaves out the labels that would overlap: the best-linked concepts (and the selected one) keep theirs, the
 * others show theirs under the pointer. Counts are on the container for the tests.
 */
function declutter(cy: Core, container: HTMLElement, focus: string | undefined): void {
  const nodes = cy.nodes();
  const candidates = nodes.map((node) => ({
    id: node.id(),
    label: node.boundingBox({
      includeNodes: false,
      includeEdges: false,
      includeLabels: true,
      includeOverlays: false,
    }),
    body: node.boundingBox({
      includeNodes: true,
      includeEdges: false,
      includeLabels: false,
      includeOverlays: false,
    }),
    rank: node.degree(false) + (node.id() === focus ? 1_000 : 0),
  }));
  const shown = labelsToShow(candidates);
  nodes.forEach((node) => {
    if (shown.has(node.id())) node.removeClass('quiet');
    else node.addClass('quiet');
  });
  container.dataset.labelsShown = String(shown.size);
  container.dataset.labelsHidden = String(nodes.length - shown.size);
}
