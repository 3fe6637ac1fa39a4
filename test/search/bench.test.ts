import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { BaselineToolIndex, baselineText, baselineTokens } from '../../bench/tool-retrieval/baseline.js';
import { featureTable, formatFeatureTable } from '../../bench/tool-retrieval/features.js';
import {
  compareRetrieval,
  contextCost,
  definitionText,
  evaluate,
  loadQueriesFile,
  loadToolsFile,
  type Searcher,
} from '../../bench/tool-retrieval/metrics.js';
import { TackError } from '../../src/errors.js';
import {
  CALL_TOOL_DEFINITION,
  formatToolHits,
  SEARCH_TOOLS_DEFINITION,
  searchToolsInput,
} from '../../src/search/meta-tools.js';
import type { SearchableTool } from '../../src/search/tool-index.js';
import { REPO, tempProject } from '../helpers/project.js';

const dir = mkdtempSync(join(tmpdir(), 'tack-tool-search-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
function file(content: string): string {
  const path = join(dir, `f${files++}`);
  writeFileSync(path, content);
  return path;
}

function thrown(fn: () => unknown): TackError {
  try {
    fn();
  } catch (error) {
    if (TackError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a TackError');
}

describe('loadToolsFile', () => {
  it('reads an array of tools, optional fields included', () => {
    const path = file(
      JSON.stringify([
        { server: 'a', name: 'x', description: 'does x', title: 'X', inputSchema: { type: 'object' } },
        { server: 'b', name: 'y' },
      ]),
    );
    expect(loadToolsFile(path)).toEqual([
      { server: 'a', name: 'x', description: 'does x', title: 'X', inputSchema: { type: 'object' } },
      { server: 'b', name: 'y', description: '' },
    ]);
  });

  it('names the file and the index of a bad entry', () => {
    const bad = file(JSON.stringify([{ server: 'a', name: 'x' }, { server: 'a', name: 'y' }, { name: 'z' }]));
    const error = thrown(() => loadToolsFile(bad));
    expect(error.code).toBe('USAGE');
    expect(error.message).toBe(`${bad} tool [2]: "server" must be a non-empty string`);
    expect(error.subject).toEqual({ file: bad, path: '[2].server' });
    expect(error.hint).toContain('docs/tool-search.md');

    const cases: Array<[unknown, string]> = [
      [[{ server: 'a', name: '' }], 'tool [0]: "name" must be a non-empty string'],
      [[{ server: 'a', name: 'x', description: 3 }], 'tool [0]: "description" must be a string'],
      [
        [{ server: 'a', name: 'x', inputSchema: 'object' }],
        'tool [0]: "inputSchema" must be a JSON Schema object',
      ],
      [['x'], 'tool [0]: expected an object'],
      [{ tool: [] }, ': expected an array of tools, or {"servers", "tools"}'],
      [{ tools: [], servers: [] }, ': "servers" must be an object of server profiles'],
      [{ tools: [], servers: { a: { title: 1 } } }, ': servers.a: "title" must be a string'],
    ];
    for (const [content, message] of cases) {
      const path = file(JSON.stringify(content));
      expect(thrown(() => loadToolsFile(path)).message).toBe(
        `${path}${message.startsWith(':') ? '' : ' '}${message}`,
      );
    }
  });

  it('says when the file is not JSON or cannot be read', () => {
    const path = file('[{"server": ');
    expect(thrown(() => loadToolsFile(path)).message).toMatch(new RegExp(`^${path}: not valid JSON \\(`));
    expect(thrown(() => loadToolsFile(join(dir, 'missing.json'))).message).toMatch(
      /^cannot read .*missing\.json: /,
    );
  });
});

describe('loadQueriesFile', () => {
  it('reads one query per line and skips blank lines', () => {
    const path = file('{"query": "a", "gold": ["s/t"]}\n\n  \n{"query": "b", "gold": ["t", "u"]}\n');
    expect(loadQueriesFile(path)).toEqual([
      { query: 'a', gold: ['s/t'] },
      { query: 'b', gold: ['t', 'u'] },
    ]);
  });

  it('names the line of a bad entry', () => {
    const cases: Array<[string, string]> = [
      ['{"query": "a", "gold": ["t"]}\n\n{"query": "b"', ':3: not valid JSON ('],
      ['{"query": "a", "gold": ["t"]}\n[1]', ':2: expected an object {query, gold}'],
      ['{"query": "", "gold": ["t"]}', ':1: "query" must be a non-empty string'],
      [
        '{"query": "a", "gold": []}',
        ':1: "gold" must be a non-empty array of "server/tool" or "tool" strings',
      ],
      ['{"query": "a", "gold": "s/t"}', ':1: "gold" must be a non-empty array'],
      ['{"query": "a", "gold": ["s/t", 2]}', ':1: "gold" must be a non-empty array'],
      ['\n\n', ': no queries'],
    ];
    for (const [content, message] of cases) {
      const path = file(content);
      expect(thrown(() => loadQueriesFile(path)).message.startsWith(`${path}${message}`)).toBe(true);
    }
  });
});

const tool = (server: string, name: string): SearchableTool => ({ server, name, description: '' });

/** A searcher that returns fixed rankings, so the metrics can be checked by hand. */
function fixed(rankings: Record<string, SearchableTool[]>): Searcher & { depths: number[] } {
  const depths: number[] = [];
  return {
    depths,
    search(query, k = 5) {
      depths.push(k);
      return (rankings[query] ?? []).slice(0, k).map((t, i) => ({ tool: t, score: 10 - i }));
    },
  };
}

describe('evaluate', () => {
  const [a, b, c, d, e, f] = ['a', 'b', 'c', 'd', 'e', 'f'].map((n) => tool('s', n)) as SearchableTool[];
  const catalog = [a!, b!, c!, d!, e!, f!];

  it('computes Hit@k, Recall@k and MRR as worked out by hand', () => {
    const searcher = fixed({
      q1: [a!, b!, c!], // gold a at rank 1
      q2: [b!, c!, d!, e!, f!, a!], // gold a at rank 6: outside top 5
      q3: [c!, a!, d!, b!], // gold a (rank 2) and b (rank 4) of gold {a, b, f}
      q4: [], // nothing found
    });
    const result = evaluate(
      searcher,
      [
        { query: 'q1', gold: ['s/a'] },
        { query: 'q2', gold: ['s/a'] },
        { query: 'q3', gold: ['a', 's/b', 's/f'] },
        { query: 'q4', gold: ['s/a'] },
      ],
      [5, 1, 10],
      catalog,
    );
    expect(searcher.depths).toEqual([10, 10, 10, 10]);
    expect(result.queries).toBe(4);
    // Hit@1: q1 only. Hit@5: q1, q3. Hit@10: q1, q2, q3.
    expect(result.hitAt).toEqual({ 1: 1 / 4, 5: 2 / 4, 10: 3 / 4 });
    // Recall@1: q1 1. Recall@5: q1 1 + q3 2/3. Recall@10: q1 1 + q2 1 + q3 2/3.
    expect(result.recallAt[1]).toBeCloseTo(1 / 4);
    expect(result.recallAt[5]).toBeCloseTo((1 + 2 / 3) / 4);
    expect(result.recallAt[10]).toBeCloseTo((1 + 1 + 2 / 3) / 4);
    // MRR: (1 + 1/6 + 1/2 + 0) / 4
    expect(result.mrr).toBeCloseTo((1 + 1 / 6 + 1 / 2) / 4);
  });

  it('matches a bare gold name on any server and server/tool on that server only', () => {
    const x1 = tool('one', 'x');
    const x2 = tool('two', 'x');
    const slashed = tool('two', 'p/q');
    const catalog = [x1, x2, slashed];
    const searcher = fixed({ q: [x2], r: [slashed] });
    const hit = (gold: string, query = 'q') =>
      evaluate(searcher, [{ query, gold: [gold] }], [1], catalog).hitAt[1];
    expect(hit('x')).toBe(1);
    expect(hit('two/x')).toBe(1);
    expect(hit('one/x')).toBe(0);
    // `p/` is no server of the catalog: the whole entry is a tool name.
    expect(hit('p/q', 'r')).toBe(1);
    expect(hit('two/p/q', 'r')).toBe(1);
  });

  it('rejects a k that is not a positive integer', () => {
    expect(thrown(() => evaluate(fixed({}), [], [0])).code).toBe('USAGE');
    expect(thrown(() => evaluate(fixed({}), [], [])).code).toBe('USAGE');
  });
});

describe('compareRetrieval', () => {
  it('scores both rankers on the same queries and lists gold entries the catalog lacks', () => {
    const tools: SearchableTool[] = [
      { server: 'files', name: 'read_file', description: 'Read a file' },
      { server: 'files', name: 'write_file', description: 'Write a file' },
      { server: 'net', name: 'fetchUrl', description: 'Download a page' },
    ];
    const result = compareRetrieval(
      tools,
      [
        { query: 'fetch url', gold: ['net/fetchUrl'] },
        { query: 'reading', gold: ['files/read_file', 'files/nope'] },
      ],
      [1],
    );
    expect(result.tools).toBe(3);
    expect(result.unknownGold).toEqual(['files/nope']);
    // Both split `fetchUrl`; only tack stems `reading` to the `read` of read_file.
    expect(result.tack.hitAt[1]).toBe(1);
    expect(result.baseline.hitAt[1]).toBe(0.5);
    expect(result.baseline.recallAt[1]).toBe(0.5);
  });
});

describe('featureTable', () => {
  /** Task Hit@5, task Recall@10 and split Recall@5 as given; the rest does not enter the table. */
  const scored = (hit5: number, recall10: number, splitRecall5: number) => ({
    task: { queries: 1, hitAt: { 5: hit5 }, recallAt: { 10: recall10 }, mrr: 0 },
    split: { queries: 1, hitAt: {}, recallAt: { 5: splitRecall5 }, mrr: 0 },
  });

  it('weighs the sets left out per query and keeps a feature only when the mean objective gains', () => {
    const big = {
      queries: 900,
      tack: scored(0.6, 0.6, 0.6),
      baseline: scored(0.3, 0.3, 0.3),
      features: {
        // Costs the big set 0.03 and gains the small one 0.3: per query, a gain of 0.003.
        costly: { has: true, with: scored(0.6, 0.6, 0.6), without: scored(0.63, 0.63, 0.63) },
        // The big set's fold tuned it out; put back, it gains there.
        useful: { has: false, with: scored(0.7, 0.6, 0.6), without: scored(0.6, 0.6, 0.6) },
      },
    };
    const small = {
      queries: 100,
      tack: scored(0.5, 0.5, 0.5),
      baseline: scored(0.2, 0.2, 0.2),
      features: {
        costly: { has: true, with: scored(0.5, 0.5, 0.5), without: scored(0.2, 0.2, 0.2) },
        useful: { has: true, with: scored(0.5, 0.5, 0.5), without: scored(0.5, 0.5, 0.5) },
      },
    };
    const result = featureTable({ big, small });
    expect(result.tack.meanPerQuery.hit5).toBeCloseTo(0.59);
    expect(result.baseline.meanPerQuery.objective).toBeCloseTo(0.29);
    const [costly, useful] = result.features;
    expect(costly!.feature).toBe('costly');
    // Without: 0.9 * 0.63 + 0.1 * 0.2 = 0.587; with: 0.59.
    expect(costly!.meanPerQuery.without.hit5).toBeCloseTo(0.587);
    expect(costly!.meanPerQuery.gain.objective).toBeCloseTo(0.003);
    expect(costly!.sets.big!.gain.hit5).toBeCloseTo(-0.03);
    expect(costly!.meanPerQuery.withoutVsTack.hit5).toBeCloseTo(-0.003);
    expect(costly!.meanPerQuery.withoutVsBaseline.hit5).toBeCloseTo(0.297);
    expect(costly!.earnsItsPlace).toBe(true);
    expect(useful!.keptByFolds).toEqual(['small']);
    expect(useful!.meanPerQuery.gain.hit5).toBeCloseTo(0.09);
    expect(useful!.earnsItsPlace).toBe(true);

    const worse = featureTable({
      big: { ...big, features: { costly: big.features.costly } },
      small: { ...small, features: { costly: { ...small.features.costly, without: scored(0.5, 0.5, 0.5) } } },
    });
    expect(worse.features[0]!.meanPerQuery.gain.objective).toBeCloseTo(-0.027);
    expect(worse.features[0]!.earnsItsPlace).toBe(false);
    expect(formatFeatureTable(worse)).toMatch(/^costly +0\.617 0\.617 0\.617 +-0\.0270 .* goes$/m);
  });
});

describe('BaselineToolIndex (Okapi BM25)', () => {
  const urlParameter = { type: 'object', properties: { url: { type: 'string' } } };
  const tools: SearchableTool[] = [
    // read file read a file: 5 words (read 2, file 2, a 1)
    { server: 'files', name: 'read_file', description: 'Read a file.' },
    // write file write text: 4 words (file 1)
    { server: 'files', name: 'write_file', description: 'Write text.' },
    // fetch url download a page url: 6 words, the parameter name counted (url 2)
    { server: 'net', name: 'fetchUrl', description: 'Download a page', inputSchema: urlParameter },
  ];

  it('splits identifiers at case, snake, kebab and digit boundaries, lower-cased, nothing stemmed or dropped', () => {
    expect(baselineTokens('getHTTPServer2fa snake_case kebab-case, the Files!')).toEqual([
      'get',
      'http',
      'server',
      '2',
      'fa',
      'snake',
      'case',
      'kebab',
      'case',
      'the',
      'files',
    ]);
    expect(baselineText(tools[2]!)).toBe('fetchUrl Download a page url');
  });

  it('scores a query exactly as the textbook formula, worked out by hand', () => {
    // N 3, average length 15 / 3 = 5, k1 1.2, b 0.75. IDF ln(1 + (N - n + 0.5) / (n + 0.5)):
    // read (n 1) ln(8/3), file (n 2) ln(1.6).
    // read_file: length 5, K = 1.2 (0.25 + 0.75 * 5/5) = 1.2; tf 2 each: 2 * 2.2 / (2 + 1.2) = 1.375.
    // write_file: length 4, K = 1.2 (0.25 + 0.75 * 4/5) = 1.02; file tf 1: 2.2 / 2.02.
    const hits = BaselineToolIndex.build(tools).search('read file', 5);
    expect(hits.map((h) => h.tool.name)).toEqual(['read_file', 'write_file']);
    expect(hits[0]!.score).toBeCloseTo(1.375 * (Math.log(8 / 3) + Math.log(1.6)), 12);
    expect(hits[1]!.score).toBeCloseTo((2.2 / 2.02) * Math.log(1.6), 12);
    // url: n 1, tf 2 in fetchUrl (name and parameter), length 6: K = 1.2 (0.25 + 0.75 * 6/5) = 1.38.
    const [url] = BaselineToolIndex.build(tools).search('URL');
    expect(url!.tool.name).toBe('fetchUrl');
    expect(url!.score).toBeCloseTo(((2 * 2.2) / (2 + 1.38)) * Math.log(8 / 3), 12);
    expect(BaselineToolIndex.build(tools).search('reading')).toEqual([]);
  });
});

describe('contextCost', () => {
  it('counts every definition inline, only the meta-tools deferred, and the meta-tools plus k tools loaded', async () => {
    const tools: SearchableTool[] = [
      { server: 's', name: 'a', description: 'x'.repeat(100) },
      { server: 's', name: 'mcp__s__b', description: 'y', inputSchema: { type: 'object', properties: {} } },
      { server: 't', name: 'c', description: 'z'.repeat(300) },
    ];
    const counted: string[] = [];
    const cost = await contextCost(
      tools,
      async (text) => {
        counted.push(text);
        return text.length;
      },
      { loaded: 2 },
    );
    const sizes = [
      definitionText({ ...tools[0]!, name: 'mcp__s__a' }).length,
      definitionText(tools[1]!).length,
      definitionText({ ...tools[2]!, name: 'mcp__t__c' }).length,
    ];
    const meta = definitionText(SEARCH_TOOLS_DEFINITION).length + definitionText(CALL_TOOL_DEFINITION).length;
    expect(counted[0]).toBe(
      JSON.stringify({
        name: 'mcp__s__a',
        description: 'x'.repeat(100),
        input_schema: { type: 'object', properties: {} },
      }),
    );
    expect(cost).toEqual({
      tools: 3,
      inlineTokens: sizes[0]! + sizes[1]! + sizes[2]!,
      deferredIdleTokens: meta,
      deferredIdleShare: meta / (sizes[0]! + sizes[1]! + sizes[2]!),
      deferredLoadedTokens: Math.round(meta + (2 * (sizes[0]! + sizes[1]! + sizes[2]!)) / 3),
      deferredLoadedMaxTokens: meta + sizes[2]! + sizes[0]!,
      loaded: 2,
      meanToolTokens: (sizes[0]! + sizes[1]! + sizes[2]!) / 3,
    });
  });

  it('loads no more tools than the catalog has, and copes with an empty one', async () => {
    const one = await contextCost([{ server: 's', name: 'a' }], () => 10);
    expect(one.loaded).toBe(1);
    expect(one.deferredLoadedMaxTokens).toBe(30);
    const none = await contextCost([], () => 10);
    expect(none).toMatchObject({ tools: 0, inlineTokens: 0, deferredIdleShare: 0, meanToolTokens: 0 });
  });
});

describe('meta-tools', () => {
  it('search_tools takes capability queries (or one query) and an optional k; call_tool a name and arguments', () => {
    expect(SEARCH_TOOLS_DEFINITION.name).toBe('search_tools');
    expect(SEARCH_TOOLS_DEFINITION.inputSchema.required).toEqual([]);
    expect(SEARCH_TOOLS_DEFINITION.inputSchema.properties.queries).toMatchObject({
      type: 'array',
      items: { type: 'string' },
      maxItems: 8,
    });
    expect(SEARCH_TOOLS_DEFINITION.inputSchema.properties.k).toMatchObject({ type: 'integer', maximum: 20 });
    expect(CALL_TOOL_DEFINITION.name).toBe('call_tool');
    expect(CALL_TOOL_DEFINITION.inputSchema.required).toEqual(['name', 'arguments']);
    expect(CALL_TOOL_DEFINITION.inputSchema.properties.arguments).toMatchObject({ type: 'object' });
  });
});

describe('search_tools arguments', () => {
  it('takes queries, a query or both (deduplicated), with k defaulting by how many', () => {
    expect(searchToolsInput({ query: ' forecast ' })).toEqual({ queries: ['forecast'], k: 5 });
    expect(searchToolsInput({ queries: ['a b', 'c d', 'a b'] })).toEqual({ queries: ['a b', 'c d'], k: 6 });
    expect(searchToolsInput({ query: 'x', queries: ['y'], k: 50 })).toEqual({ queries: ['x', 'y'], k: 20 });
    // A model that sends one string where the list goes is met halfway.
    expect(searchToolsInput({ queries: 'send email' })).toEqual({ queries: ['send email'], k: 5 });
  });

  it('says what is wrong in words the model can act on', () => {
    expect(searchToolsInput({})).toEqual({ error: expect.stringMatching(/give "queries"/) });
    expect(searchToolsInput({ queries: [1] })).toEqual({ error: expect.stringMatching(/list of strings/) });
    expect(searchToolsInput({ queries: Array.from({ length: 9 }, (_, i) => `q${i}`) })).toEqual({
      error: expect.stringMatching(/at most 8 queries/),
    });
    // Ranking a 4 MB query held a shared gateway's event loop for about a second: refused, not ranked.
    expect(searchToolsInput({ query: 'read file '.repeat(400_000) })).toEqual({
      error: expect.stringMatching(/a query is at most 1000 characters/),
    });
    expect(searchToolsInput({ query: 'x'.repeat(1_000) })).toEqual({ queries: ['x'.repeat(1_000)], k: 5 });
  });

  it("groups hits by server in the order of each server's best tool", () => {
    const hit = (server: string, name: string) => ({
      tool: { server, name, description: `${name} does it` },
    });
    const text = formatToolHits('"q"', [hit('a', 'x'), hit('b', 'y'), hit('a', 'z')], [], 'next');
    expect(text.split('\n')).toEqual([
      '1. x (server a): x does it',
      '2. z (server a): z does it',
      '3. y (server b): y does it',
      'next',
    ]);
    expect(formatToolHits('"q"', [], [], 'next')).toBe('No tool matches "q". Try other words.');
  });
});

/** The built report script (`npm run build` writes it), run as a user runs it. */
function runReport(args: string[], cwd: string): { code: number | null; stdout: string; stderr: string } {
  const run = spawnSync(
    process.execPath,
    [join(REPO, 'dist', 'bench', 'tool-retrieval', 'report.js'), ...args],
    {
      cwd,
      encoding: 'utf8',
    },
  );
  return { code: run.status, stdout: run.stdout, stderr: run.stderr };
}

describe('bench/tool-retrieval/report.ts', () => {
  it('the report runs a retrieval set offline: both rankers side by side, and the context table', async () => {
    using project = tempProject();
    project.write(
      'tools.json',
      JSON.stringify([
        { server: 'wx', name: 'get_forecast', description: 'Weather forecast for a city.' },
        { server: 'wx', name: 'list_cities', description: 'Cities with forecasts.' },
        {
          server: 'fs',
          name: 'read_file',
          description: 'Read a file from disk.',
          inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
        },
        { server: 'fs', name: 'write_file', description: 'Write a file to disk.' },
      ]),
    );
    project.write(
      'queries.jsonl',
      '{"query": "will it rain in Oslo tomorrow", "gold": ["wx/get_forecast"]}\n{"query": "open the config file", "gold": ["read_file"]}\n',
    );
    const run = runReport(
      ['--tools', 'tools.json', '--queries', 'queries.jsonl', '--k', '1,2', '--json'],
      project.dir,
    );
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as {
      retrieval: { tack: { hitAt: Record<string, number> }; baseline: { hitAt: Record<string, number> } };
      context: { inlineTokens: number; deferredIdleTokens: number };
    };
    expect(Object.keys(report.retrieval.tack.hitAt)).toEqual(['1', '2']);
    expect(report.retrieval.baseline.hitAt['2']).toBeGreaterThanOrEqual(0);
    expect(report.context.inlineTokens).toBeGreaterThan(0);
    const table = runReport(['--tools', 'tools.json', '--queries', 'queries.jsonl'], project.dir);
    expect(table.stdout).toMatch(/^tack +[\d.]+/m);
    expect(table.stdout).toMatch(/^ {2}without server evidence +[\d.]+/m);
    expect(table.stdout).toMatch(/^ {2}(?:without|with) BM25F joint saturation +[\d.]+/m);
    expect(table.stdout).toMatch(/^baseline: BM25 +[\d.]+/m);
    expect(table.stdout).toContain('The task split into capability queries');
    expect(table.stdout).toContain('deferred, idle (search_tools + call_tool)');
    const bad = runReport(['--tools', 'queries.jsonl', '--queries', 'queries.jsonl'], project.dir);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('queries.jsonl');
  });
});
