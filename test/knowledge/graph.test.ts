import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/knowledge/bundle.js';
import { graphJson, renderGraph } from '../../src/knowledge/graph.js';
import { REPO, tempProject } from '../helpers/project.js';

const ACME = join(REPO, 'test', 'fixtures', 'okf', 'acme_retail');
/** Before acme_retail's `stale_after: 2026-12-31T00:00:00Z`, and after it. */
const FRESH = Date.parse('2026-11-30T02:00:00Z');
const LATER = Date.parse('2027-01-02T00:00:00Z');

describe('renderGraph on acme_retail', () => {
  it('draws Mermaid: concepts with title and type, typed edges labelled, deprecated dashed', async () => {
    const bundle = await loadBundle(ACME);
    const text = renderGraph(bundle, 'mermaid', { now: FRESH });
    const lines = text.trimEnd().split('\n');
    expect(lines[0]).toBe('flowchart LR');
    expect(lines).toContain('  c_computations_revenue_ytd -->|source| c_policies_revenue_recognition');
    expect(lines).toContain('  c_computations_revenue_ytd -->|executor| c_skills_run_on_bq');
    expect(lines).toContain('  c_metrics_revenue --> c_computations_revenue_ytd');
    expect(lines).toContain('  c_metrics_gross_margin_legacy --> c_metrics_gross_margin');
    expect(lines).toContain('  c_tables_orders["Customer Orders<br/><i>BigQuery Table</i>"]');
    // `&` would be read as HTML: written as Mermaid's entity code.
    expect(lines).toContain(
      '  c_policies_margin_standard["Acme Retail — Cost Allocation #38; Margin Standard (FY2026)<br/><i>Policy</i>"]',
    );
    expect(text).toMatch(/^ {2}classDef deprecated stroke-dasharray/m);
    expect(lines).toContain('  class c_metrics_gross_margin_legacy deprecated');
    expect(text).not.toContain('STALE');
    expect(text).not.toContain('classDef stale');
    // Every concept is a node, every edge is between declared nodes.
    const declared = new Set(lines.flatMap((l) => /^ {2}(\w+)\[/.exec(l)?.[1] ?? []));
    expect(declared.size).toBe(bundle.concepts.size);
    for (const edge of lines.filter((l) => l.includes('-->'))) {
      const [, from, to] = /^ {2}(\w+) -->(?:\|\w+\|)? (\w+)$/.exec(edge)!;
      expect(declared.has(from!) && declared.has(to!)).toBe(true);
    }
  });

  it('draws DOT with quoted ids, kind labels, dashed deprecated nodes', async () => {
    const bundle = await loadBundle(ACME);
    const text = renderGraph(bundle, 'dot', { now: FRESH });
    expect(text.startsWith('digraph "acme_retail" {\n')).toBe(true);
    expect(text.endsWith('}\n')).toBe(true);
    const lines = text.split('\n');
    expect(lines).toContain(
      '  "computations/revenue-ytd" -> "policies/revenue-recognition" [label="source"];',
    );
    expect(lines).toContain('  "computations/gross-margin-period" -> "skills/run-on-bq" [label="executor"];');
    expect(lines).toContain('  "metrics/revenue" -> "computations/revenue-ytd";');
    expect(lines).toContain(
      '  "metrics/gross-margin-legacy" [label="Gross Margin (legacy, pre-FY2026)\\nMetric", style="rounded,dashed", fontcolor="gray40"];',
    );
    expect(lines.filter((l) => l.includes(' -> '))).toHaveLength(graphJson(bundle).edges.length);
  });

  it('marks stale concepts in both formats once stale_after has passed', async () => {
    const bundle = await loadBundle(ACME);
    const mermaid = renderGraph(bundle, 'mermaid', { now: LATER });
    expect(mermaid).toContain('c_metrics_revenue["Revenue<br/><i>Metric</i><br/>STALE"]');
    expect(mermaid).toMatch(/^ {2}class .*\bc_metrics_revenue\b.* stale$/m);
    // No stale_after: never stale.
    expect(mermaid).toContain(
      'c_metrics_gross_margin_legacy["Gross Margin (legacy, pre-FY2026)<br/><i>Metric</i>"]',
    );
    const dot = renderGraph(bundle, 'dot', { now: LATER });
    expect(dot).toContain('"metrics/revenue" [label="Revenue\\nMetric\\nSTALE", color="red3", penwidth=2];');
  });

  it('is deterministic and sorted', async () => {
    const [a, b] = await Promise.all([loadBundle(ACME), loadBundle(ACME)]);
    for (const format of ['mermaid', 'dot'] as const)
      expect(renderGraph(a, format, { now: FRESH })).toBe(renderGraph(b, format, { now: FRESH }));
    const edges = graphJson(a).edges.map((e) => `${e.from} ${e.to} ${e.kind}`);
    expect(edges).toEqual([...edges].sort());
    expect(new Set(edges).size).toBe(edges.length);
  });
});

describe('graphJson', () => {
  it('lists nodes with trust and status, and edges with their kind', async () => {
    const bundle = await loadBundle(ACME);
    const graph = graphJson(bundle, { now: FRESH });
    expect(graph.bundle).toBe('acme_retail');
    expect(graph.nodes.map((n) => n.id)).toEqual([...bundle.concepts.keys()].sort());
    expect(graph.nodes.find((n) => n.id === 'metrics/gross-margin-legacy')).toEqual({
      id: 'metrics/gross-margin-legacy',
      title: 'Gross Margin (legacy, pre-FY2026)',
      type: 'Metric',
      trust: 'human-reviewed',
      status: 'deprecated',
      stale: false,
    });
    expect(graph.edges).toContainEqual({
      from: 'computations/revenue-ytd',
      to: 'policies/revenue-recognition',
      kind: 'source',
    });
    expect(graph.edges.every((e) => e.file === undefined)).toBe(true);
  });
});

describe('renderGraph escaping and files', () => {
  it('keeps ids apart and labels intact when titles and names carry syntax', async () => {
    using project = tempProject();
    const root = join(project.dir, 'b');
    mkdirSync(join(root, 'data'), { recursive: true });
    writeFileSync(
      join(root, 'a-b.md'),
      '---\ntype: Metric\ntitle: \'Say "hi" #1 <b> & `x` \\l\'\n---\n[1](a_b.md) [2](data/schema.json) [3](end.md)\n',
    );
    writeFileSync(join(root, 'a_b.md'), '---\ntype: Metric\n---\n');
    writeFileSync(join(root, 'end.md'), '---\ntype: Odd "type"\n---\n');
    writeFileSync(join(root, 'data', 'schema.json'), '{}');
    const bundle = await loadBundle(root);

    const mermaid = renderGraph(bundle, 'mermaid', { includeFiles: true }).split('\n');
    expect(mermaid).toContain(
      '  c_a_b["Say #34;hi#34; #35;1 #60;b#62; #38; #96;x#96; \\l<br/><i>Metric</i>"]',
    );
    expect(mermaid).toContain('  c_a_b_2["a b<br/><i>Metric</i>"]');
    expect(mermaid).toContain('  c_end["end<br/><i>Odd #34;type#34;</i>"]');
    expect(mermaid).toContain('  f_data_schema_json[/"data/schema.json"/]');
    expect(mermaid).toContain('  c_a_b --> c_a_b_2');
    expect(mermaid).toContain('  c_a_b --> c_end');
    expect(mermaid).toContain('  c_a_b --> f_data_schema_json');

    const dot = renderGraph(bundle, 'dot', { includeFiles: true }).split('\n');
    expect(dot).toContain('  "a-b" [label="Say \\"hi\\" #1 <b> & `x` \\\\l\\nMetric"];');
    expect(dot).toContain('  "file:data/schema.json" [label="data/schema.json", shape=note, style=""];');
    expect(dot).toContain('  "a-b" -> "file:data/schema.json";');

    // Without includeFiles the file drops out, and so does its node.
    expect(renderGraph(bundle, 'dot')).not.toContain('schema.json');
    expect(graphJson(bundle, { includeFiles: true }).edges).toContainEqual({
      from: 'a-b',
      to: 'data/schema.json',
      kind: 'link',
      file: true,
    });
  });
});
