import type { EdgeKind, KnowledgeBundle } from './bundle.js';
import { type Concept, type ConceptStatus, isStale } from './concept.js';
import type { TrustTier } from './trust-tier.js';

/** The text formats `renderGraph` draws a bundle's link graph in. */
export type GraphFormat = 'mermaid' | 'dot';

export interface GraphOptions {
  /**
   * Also draw edges to files and folders of the bundle that are not concepts (a `computation` script, an
   * `attester`, a linked index.md or a concept file that failed to parse). Off by default: the concept graph
   * is what a reader wants, and a bundle's code files would crowd it.
   */
  includeFiles?: boolean;
  /** The instant staleness is judged at (default: now). */
  now?: number;
}

export interface GraphNode {
  id: string;
  title: string;
  type: string;
  trust: TrustTier;
  status: ConceptStatus;
  stale: boolean;
}

export interface GraphEdge {
  from: string;
  /** A concept id, or with `file` a bundle-relative file or folder path. */
  to: string;
  kind: EdgeKind;
  file?: true;
}

export interface GraphJson {
  bundle: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
}

interface Model {
  concepts: Concept[];
  files: string[];
  edges: GraphEdge[];
  stale: ReadonlySet<string>;
}

/**
 * The bundle's link graph (body links and path-valued fields, bundle.ts) for `tack knowledge graph`: concepts
 * as nodes labelled with title and type, edges labelled with their kind unless a plain link. Deprecated
 * concepts are dashed and stale ones marked, since those are the two facts that change how a reader should
 * treat a node. Sorted throughout so the same bundle always gives the same text (diffable in a repo).
 */
export function renderGraph(
  bundle: KnowledgeBundle,
  format: GraphFormat,
  options: GraphOptions = {},
): string {
  const model = graphModel(bundle, options);
  return format === 'mermaid' ? mermaid(model) : dot(bundle.name, model);
}

/** The same graph as data, for `--json`. */
export function graphJson(bundle: KnowledgeBundle, options: GraphOptions = {}): GraphJson {
  const model = graphModel(bundle, options);
  return {
    bundle: bundle.name,
    nodes: model.concepts.map((c) => ({
      id: c.id,
      title: c.title,
      type: c.type,
      trust: c.trust,
      status: c.status,
      stale: model.stale.has(c.id),
    })),
    edges: model.edges,
  };
}

function graphModel(bundle: KnowledgeBundle, options: GraphOptions): Model {
  const now = options.now ?? Date.now();
  const concepts = [...bundle.concepts.values()].sort((a, b) => compare(a.id, b.id));
  const seen = new Set<string>();
  const edges: GraphEdge[] = [];
  const files = new Set<string>();
  for (const edge of bundle.edges) {
    // A .md the loader could not read as a concept is a file here: drawing it as a concept would need a
    // title and type it does not have.
    const file = !edge.toConcept || !bundle.concepts.has(edge.to);
    if (file && !options.includeFiles) continue;
    const key = `${edge.from}\u0000${edge.to}\u0000${edge.kind}\u0000${file}`;
    if (seen.has(key)) continue;
    seen.add(key);
    if (file) files.add(edge.to);
    edges.push({ from: edge.from, to: edge.to, kind: edge.kind, ...(file ? { file: true as const } : {}) });
  }
  edges.sort(
    (a, b) =>
      compare(a.from, b.from) ||
      compare(a.to, b.to) ||
      compare(a.kind, b.kind) ||
      Number(!!a.file) - Number(!!b.file),
  );
  return {
    concepts,
    files: [...files].sort(compare),
    edges,
    stale: new Set(concepts.filter((c) => isStale(c, now)).map((c) => c.id)),
  };
}

function mermaid(model: Model): string {
  const ids = new Map<string, string>();
  const used = new Set<string>();
  // Prefixed so no id is a Mermaid keyword (`end`) or starts with the `o`/`x` an edge would swallow.
  const idOf = (key: string, prefix: string): string => {
    const base = `${prefix}_${key.replace(/[^A-Za-z0-9_]/g, '_')}`;
    let id = base;
    for (let n = 2; used.has(id); n++) id = `${base}_${n}`;
    used.add(id);
    ids.set(`${prefix}\u0000${key}`, id);
    return id;
  };
  const lines = ['flowchart LR'];
  const classes = new Map<string, string[]>();
  const addClass = (name: string, id: string) => classes.set(name, [...(classes.get(name) ?? []), id]);
  for (const c of model.concepts) {
    const id = idOf(c.id, 'c');
    const stale = model.stale.has(c.id);
    const label = `${mermaidText(c.title)}<br/><i>${mermaidText(c.type)}</i>${stale ? '<br/>STALE' : ''}`;
    lines.push(`  ${id}["${label}"]`);
    if (c.status === 'deprecated') addClass('deprecated', id);
    if (stale) addClass('stale', id);
  }
  for (const f of model.files) {
    const id = idOf(f, 'f');
    lines.push(`  ${id}[/"${mermaidText(f)}"/]`);
    addClass('file', id);
  }
  for (const e of model.edges) {
    const from = ids.get(`c\u0000${e.from}`)!;
    const to = ids.get(`${e.file ? 'f' : 'c'}\u0000${e.to}`)!;
    lines.push(e.kind === 'link' ? `  ${from} --> ${to}` : `  ${from} -->|${e.kind}| ${to}`);
  }
  const styles: Record<string, string> = {
    deprecated: 'stroke-dasharray:5 5,color:#777',
    stale: 'stroke:#c00,stroke-width:2px',
    file: 'fill:#f4f4f4,stroke:#999',
  };
  for (const [name, style] of Object.entries(styles)) {
    const members = classes.get(name);
    if (!members) continue;
    lines.push(`  classDef ${name} ${style}`);
    lines.push(`  class ${members.join(',')} ${name}`);
  }
  return `${lines.join('\n')}\n`;
}

/**
 * Text inside a quoted Mermaid label: `"` ends it, `#` starts an entity code, `<`/`>`/`&` would be read as
 * HTML, and a leading backtick turns it into a Markdown string. All become Mermaid's `#<code>;` entities.
 */
function mermaidText(value: string): string {
  return value.replace(/\s+/g, ' ').replace(/[#"<>&`]/g, (ch) => `#${ch.charCodeAt(0)};`);
}

function dot(name: string, model: Model): string {
  const lines = [
    `digraph ${dotString(name)} {`,
    '  rankdir=LR;',
    '  node [shape=box, style="rounded", fontname="Helvetica", fontsize=11];',
    '  edge [fontname="Helvetica", fontsize=9];',
  ];
  for (const c of model.concepts) {
    const stale = model.stale.has(c.id);
    const attrs = [`label=${dotString(`${c.title}\n${c.type}${stale ? '\nSTALE' : ''}`)}`];
    if (c.status === 'deprecated') attrs.push('style="rounded,dashed"', 'fontcolor="gray40"');
    if (stale) attrs.push('color="red3"', 'penwidth=2');
    lines.push(`  ${dotString(c.id)} [${attrs.join(', ')}];`);
  }
  // File nodes get a prefix so a file can never share a DOT node name with a concept id.
  const fileNode = (path: string) => dotString(`file:${path}`);
  for (const f of model.files) lines.push(`  ${fileNode(f)} [label=${dotString(f)}, shape=note, style=""];`);
  for (const e of model.edges) {
    const to = e.file ? fileNode(e.to) : dotString(e.to);
    lines.push(`  ${dotString(e.from)} -> ${to}${e.kind === 'link' ? '' : ` [label=${dotString(e.kind)}]`};`);
  }
  lines.push('}');
  return `${lines.join('\n')}\n`;
}

/**
 * A DOT quoted string. A backslash is doubled so Graphviz does not read `\l`, `\N` and the like in a label as
 * its escapes; a line break becomes the `\n` escape.
 */
function dotString(value: string): string {
  return `"${value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\r?\n/g, '\\n')}"`;
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
