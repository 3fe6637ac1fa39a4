import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { DEFAULT_RANKING, mergeRanking } from '../src/search/ranking.js';
import { ToolTermCache } from '../src/search/term-cache.js';
import { type SearchableTool, ToolSearchIndex } from '../src/search/tool-index.js';
import { mulberry32 } from './random.js';
import { BaselineToolIndex } from './tool-retrieval/baseline.js';
import {
  type Dataset,
  diffFromPrior,
  KS,
  leaveOneOut,
  loadDataset,
  metricsRow,
  sample,
  tune,
  tunedOnAll,
} from './tool-retrieval/lodo.js';
import {
  contextCost,
  evaluate,
  loadQueriesFile,
  loadToolsFile,
  type RetrievalQuery,
} from './tool-retrieval/metrics.js';
import {
  collectGarbage,
  isMain,
  log,
  median,
  p50p99,
  qwen3Tokens,
  repoRoot,
  round,
  sdkClient,
  tempDir,
} from './util.js';

/**
 * MetaTool (Huang et al. 2023, MIT; HowieHwong/MetaTool@35e81bb) as tools.json + queries.jsonl:
 * - plugin_des.json: 199 plugins, name -> one-line description. Each becomes one tool of the server
 *   `metatool` (MetaTool has no servers; its plugins are single-purpose), without an input schema.
 * - all_clean_data.csv: `Query,Tool`, one row per (query, plugin); every Tool value is a plugin_des.json key
 *   exactly as written (case and punctuation, e.g. `PDF&URLTool`). 20,614 rows, 20,550 distinct queries: a
 *   query listed with two plugins gets both as gold.
 * - multi_tool_query_golden.json: 497 `{query, tool: [a, b]}`, all keys of plugin_des.json.
 */
export const METATOOL_DIR =
  process.env.TACK_METATOOL_DIR ?? join(repoRoot, '../shared/data/tool-retrieval/metatool');
export const METATOOL_SERVER = 'metatool';

export interface MetaTool {
  tools: SearchableTool[];
  single: RetrievalQuery[];
  multi: RetrievalQuery[];
}

/** RFC 4180: quoted fields may hold commas, doubled quotes and newlines. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c !== '"') field += c;
      else if (text[i + 1] === '"') {
        field += '"';
        i++;
      } else quoted = false;
    } else if (c === '"') quoted = true;
    else if (c === ',') {
      row.push(field);
      field = '';
    } else if (c === '\n') {
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else if (c !== '\r') field += c;
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}

export function loadMetaTool(dir = METATOOL_DIR): MetaTool {
  const descriptions = JSON.parse(readFileSync(join(dir, 'plugin_des.json'), 'utf8')) as Record<
    string,
    string
  >;
  const tools = Object.entries(descriptions).map(
    ([name, description]): SearchableTool => ({ server: METATOOL_SERVER, name, description }),
  );
  const known = new Set(Object.keys(descriptions));
  const gold = (tool: string, where: string) => {
    if (!known.has(tool)) throw new Error(`MetaTool ${where}: ${tool} is not a plugin_des.json key`);
    return `${METATOOL_SERVER}/${tool}`;
  };

  const [header, ...rows] = parseCsv(readFileSync(join(dir, 'all_clean_data.csv'), 'utf8'));
  if (header?.join(',') !== 'Query,Tool')
    throw new Error('MetaTool all_clean_data.csv: expected header Query,Tool');
  const byQuery = new Map<string, Set<string>>();
  rows.forEach(([query, tool], i) => {
    if (!query || !tool) throw new Error(`MetaTool all_clean_data.csv:${i + 2}: expected Query,Tool`);
    const set = byQuery.get(query) ?? new Set<string>();
    set.add(gold(tool, `all_clean_data.csv:${i + 2}`));
    byQuery.set(query, set);
  });
  const single = [...byQuery].map(([query, set]) => ({ query, gold: [...set] }));

  const golden = JSON.parse(readFileSync(join(dir, 'multi_tool_query_golden.json'), 'utf8')) as Array<{
    query: string;
    tool: string[];
  }>;
  const multi = golden.map((q, i) => ({
    query: q.query,
    gold: [...new Set(q.tool.map((t) => gold(t, `multi_tool_query_golden.json[${i}]`)))],
  }));
  return { tools, single, multi };
}

/**
 * TUNE (30 %) or TEST (70 %), from a hash of the query text alone: stable across runs and machines, and a
 * query listed twice lands in one split only.
 */
export function splitOf(query: string): 'tune' | 'test' {
  const bucket = createHash('sha256').update(query).digest().readUInt32BE(0) % 100;
  return bucket < 30 ? 'tune' : 'test';
}

export function split(queries: readonly RetrievalQuery[]): Record<'tune' | 'test', RetrievalQuery[]> {
  const result: Record<'tune' | 'test', RetrievalQuery[]> = { tune: [], test: [] };
  for (const q of queries) result[splitOf(q.query)].push(q);
  return result;
}

/** Writes the catalog and each split as the files bench/tool-retrieval/report.ts reads. */
export function writeMetaTool(dir: string, data: MetaTool = loadMetaTool()): Record<string, string> {
  mkdirSync(dir, { recursive: true });
  const files: Record<string, string> = { tools: join(dir, 'tools.json') };
  writeFileSync(files.tools!, `${JSON.stringify(data.tools, null, 1)}\n`);
  for (const [kind, queries] of [
    ['single', data.single],
    ['multi', data.multi],
  ] as const) {
    for (const [part, list] of Object.entries(split(queries))) {
      const file = join(dir, `queries-${kind}-${part}.jsonl`);
      writeFileSync(file, list.map((q) => `${JSON.stringify(q)}\n`).join(''));
      files[`${kind}-${part}`] = file;
    }
  }
  return files;
}

// ---------------------------------------------------------------------------------------------------------
// Synthetic catalogs: MetaTool's plugins as servers of several tools with realistic input schemas

type Schema = Record<string, unknown>;

const PARAMS: Record<string, Schema> = {
  query: { type: 'string', description: 'Free-text search query, in the words a person would use' },
  id: { type: 'string', description: 'Identifier of the item, as returned by a search or list call' },
  limit: {
    type: 'integer',
    minimum: 1,
    maximum: 100,
    default: 10,
    description: 'Maximum number of results to return',
  },
  cursor: { type: 'string', description: 'Opaque pagination cursor from the previous response' },
  language: { type: 'string', description: 'ISO 639-1 language code of the results, e.g. "en"' },
  location: {
    type: 'object',
    description: 'Where to look',
    properties: {
      city: { type: 'string', description: 'City name' },
      country: { type: 'string', description: 'ISO 3166-1 alpha-2 country code' },
    },
  },
  date_range: {
    type: 'object',
    description: 'Only items within these dates',
    properties: {
      from: { type: 'string', format: 'date', description: 'First day, YYYY-MM-DD' },
      to: { type: 'string', format: 'date', description: 'Last day, YYYY-MM-DD' },
    },
  },
  format: {
    type: 'string',
    enum: ['json', 'markdown', 'text'],
    default: 'json',
    description: 'Output format',
  },
  url: { type: 'string', format: 'uri', description: 'URL of the page or document' },
  tags: { type: 'array', items: { type: 'string' }, description: 'Only items with all of these tags' },
  sort: { type: 'string', enum: ['relevance', 'date', 'popularity'], description: 'Order of the results' },
  include_details: { type: 'boolean', default: false, description: 'Return the full record, not a summary' },
  title: { type: 'string', description: 'Title of the new item' },
  content: { type: 'string', description: 'Body of the item, Markdown allowed' },
  fields: {
    type: 'object',
    description: 'Fields to change; omitted fields keep their value',
    additionalProperties: true,
  },
};

/** Verbs of a synthetic tool: what it starts with, and the parameters it always takes. */
const VERBS: Array<{ verb: string; phrase: string; required: string[] }> = [
  { verb: 'search', phrase: 'Search', required: ['query'] },
  { verb: 'get', phrase: 'Get one item by id from', required: ['id'] },
  { verb: 'list', phrase: 'List recent items of', required: [] },
  { verb: 'create', phrase: 'Create an item in', required: ['title', 'content'] },
  { verb: 'update', phrase: 'Update an item in', required: ['id', 'fields'] },
  { verb: 'delete', phrase: 'Delete an item from', required: ['id'] },
  { verb: 'export', phrase: 'Export results of', required: ['query', 'format'] },
];
const OPTIONAL = [
  'limit',
  'cursor',
  'language',
  'location',
  'date_range',
  'url',
  'tags',
  'sort',
  'include_details',
];

const snake = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .replace(/^_|_$/g, '')
    .toLowerCase();

/**
 * `count` tools shaped like real MCP catalogs: each MetaTool plugin is a server (`<plugin>` or, past the first
 * round, `<plugin>_<round>`) of `perServer` tools (`search_<plugin>`, `get_<plugin>` ...) whose description
 * is a verb phrase plus the plugin's description, with 1-4 optional parameters besides the required ones.
 */
export function syntheticCatalog(
  plugins: readonly SearchableTool[],
  count: number,
  options: { perServer?: number; seed?: number } = {},
): SearchableTool[] {
  const perServer = options.perServer ?? 3;
  const random = mulberry32(options.seed ?? 7);
  const tools: SearchableTool[] = [];
  for (let round = 0; tools.length < count; round++) {
    for (const plugin of plugins) {
      const base = snake(plugin.name);
      const server = round === 0 ? base : `${base}_${round}`;
      const offset = Math.floor(random() * VERBS.length);
      for (let i = 0; i < perServer && tools.length < count; i++) {
        const { verb, phrase, required } = VERBS[(offset + i) % VERBS.length]!;
        const optional = [...OPTIONAL].sort(() => random() - 0.5).slice(0, 1 + Math.floor(random() * 4));
        const names = [...required, ...optional];
        tools.push({
          server,
          name: `${verb}_${base}`,
          description: `${phrase} ${plugin.name}. ${plugin.description ?? ''}`,
          inputSchema: {
            type: 'object',
            properties: Object.fromEntries(names.map((n) => [n, PARAMS[n]!])),
            required,
            additionalProperties: false,
          },
        });
      }
    }
  }
  return tools;
}

// ---------------------------------------------------------------------------------------------------------
// Real servers: the catalog a user of the reference servers and tack's examples would have

const requireFrom = createRequire(import.meta.url);

async function realCatalog(): Promise<{ tools: SearchableTool[]; servers: Record<string, number> }> {
  const tmp = tempDir('tool-search-servers');
  const entry = (pkg: string) => requireFrom.resolve(`@modelcontextprotocol/${pkg}/dist/index.js`);
  const servers: Record<string, { args: string[]; env?: Record<string, string> }> = {
    everything: { args: [entry('server-everything'), 'stdio'] },
    filesystem: { args: [entry('server-filesystem'), tmp.dir] },
    memory: { args: [entry('server-memory')], env: { MEMORY_FILE_PATH: join(tmp.dir, 'memory.jsonl') } },
    'sequential-thinking': { args: [entry('server-sequential-thinking')] },
    notes: { args: [join(repoRoot, 'dist/examples/servers/notes.js')] },
    weather: { args: [join(repoRoot, 'dist/examples/servers/weather-legacy.js')] },
    docs: { args: [join(repoRoot, 'bin/tack.js'), 'serve-docs', join(repoRoot, 'docs')] },
  };
  const tools: SearchableTool[] = [];
  const counts: Record<string, number> = {};
  try {
    for (const [server, { args, env }] of Object.entries(servers)) {
      const client = await sdkClient(
        new StdioClientTransport({ command: process.execPath, args, env: { ...env }, stderr: 'ignore' }),
      );
      try {
        const listed = (await client.listTools()).tools;
        counts[server] = listed.length;
        for (const t of listed) {
          const tool: SearchableTool = {
            server,
            name: t.name,
            description: t.description ?? '',
            inputSchema: t.inputSchema,
          };
          if (t.title) tool.title = t.title;
          tools.push(tool);
        }
      } finally {
        await client.close();
      }
    }
  } finally {
    tmp.remove();
  }
  return { tools, servers: counts };
}

// ---------------------------------------------------------------------------------------------------------
// The benchmark

function timeSearches(index: { search(q: string, k?: number): unknown }, queries: readonly string[]) {
  for (const q of queries.slice(0, 100)) index.search(q, 5);
  const samples = queries.map((q) => {
    const started = performance.now();
    index.search(q, 5);
    return performance.now() - started;
  });
  return p50p99(
    samples.sort((a, b) => a - b),
    3,
  );
}

function latency(plugins: readonly SearchableTool[], queries: readonly string[], size: number) {
  const tools = syntheticCatalog(plugins, size, { perServer: 5, seed: size });
  const builds: number[] = [];
  let index: ToolSearchIndex | undefined;
  collectGarbage();
  const heapBefore = process.memoryUsage().heapUsed;
  for (let run = 0; run < 5; run++) {
    index = undefined;
    const started = performance.now();
    index = ToolSearchIndex.build(tools);
    builds.push(performance.now() - started);
  }
  collectGarbage();
  const heapMB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20;
  // With the term cache (search/term-cache.ts): cold = an empty cache, tokenized and written; warm = a new
  // cache object over that file (read, checked, decoded), nothing tokenized.
  const tokensDir = tempDir('tool-terms');
  const tokensFile = join(tokensDir.dir, 'tool-terms.idx');
  const cold: number[] = [];
  const warm: number[] = [];
  for (let run = 0; run < 5; run++) {
    rmSync(tokensFile, { force: true });
    let started = performance.now();
    const empty = new ToolTermCache(tokensFile);
    ToolSearchIndex.build(tools, { terms: empty });
    empty.save();
    cold.push(performance.now() - started);
    started = performance.now();
    ToolSearchIndex.build(tools, { terms: new ToolTermCache(tokensFile) });
    warm.push(performance.now() - started);
  }
  const tokensFileMB = statSync(tokensFile).size / 2 ** 20;
  tokensDir.remove();
  const search = timeSearches(index!, queries);
  // Three capability queries at once, as a model splitting a task would send them.
  const many = {
    search: (q: string, k?: number) => index!.searchMany([q, `${q} report`, `send ${q}`], k),
  };
  const searchThreeQueries = timeSearches(many, queries.slice(0, 500));
  // A list_changed: one server's tools re-listed (same tools, as most refreshes are) and re-indexed.
  const servers = [...new Set(tools.map((t) => t.server))];
  const byServer = new Map<string, SearchableTool[]>(servers.map((server) => [server, []]));
  for (const tool of tools) byServer.get(tool.server)!.push(tool);
  const replace: number[] = [];
  for (let i = 0; i < 500; i++) {
    const server = servers[(i * 7919) % servers.length]!;
    const started = performance.now();
    index!.replaceServer(server, byServer.get(server)!);
    replace.push(performance.now() - started);
  }
  const searchAfter = timeSearches(index!, queries.slice(0, 500));
  const baseline = BaselineToolIndex.build(tools);
  return {
    tools: tools.length,
    servers: servers.length,
    buildMs: round(median(builds), 1),
    buildWithTermCache: {
      coldMs: round(median(cold), 1),
      warmMs: round(median(warm), 1),
      fileMB: round(tokensFileMB, 1),
    },
    indexHeapMB: round(heapMB, 1),
    search,
    searchThreeQueries,
    searchAfterReplaces: searchAfter,
    replaceServer: {
      toolsPerServer: 5,
      ...p50p99(
        replace.sort((a, b) => a - b),
        3,
      ),
    },
    baselineSearch: timeSearches(baseline, queries),
  };
}

/** Each tool with the queries whose gold it is as `examples` (what the harness learns from sessions). */
function withExamples(
  tools: readonly SearchableTool[],
  queries: readonly RetrievalQuery[],
): SearchableTool[] {
  const byName = new Map<string, string[]>();
  for (const q of queries)
    for (const gold of q.gold) {
      const name = gold.includes('/') ? gold.slice(gold.indexOf('/') + 1) : gold;
      const list = byName.get(name) ?? [];
      list.push(q.query);
      byName.set(name, list);
    }
  return tools.map((t) => ({ ...t, examples: byName.get(t.name) ?? [] }));
}

/** The sets of TACK_TOOL_RETRIEVAL_DIR (default ../data/tool-retrieval) (converted by tool-retrieval/convert.ts; SOURCE.txt in each). */
export const SETS = ['restbench', 'taubench', 'toollens'] as const;

/** MetaTool as one data set of the leave-one-out: its single-tool and two-tool queries together. */
export function metatoolSet(data: MetaTool): Dataset {
  return {
    name: 'metatool',
    tools: data.tools,
    servers: {},
    queries: [...data.single, ...data.multi],
    tuning: [...sample(data.single, 1200), ...sample(data.multi, 300)],
  };
}

/**
 * Only the latency part of runToolSearch (`node dist/bench/run.js tool-index`): build, search, replace and the
 * term cache at 1,000 and 10,000 synthetic tools, without the minutes of tuning the retrieval figures take.
 */
export async function runToolIndex(options: { metatool?: string } = {}) {
  const data = loadMetaTool(options.metatool);
  const queries = split(data.single)
    .test.slice(0, 2000)
    .map((x) => x.query);
  log('tool-index: latency');
  return {
    description:
      'Latency of the tool index: synthetic catalogs (MetaTool plugins as servers of 5 tools), build median of 5 (also with the term cache: cold = empty, tokenized and written; warm = read from that file), 2000 MetaTool TEST queries after 100 warm-up searches, k = 5; replaceServer re-indexes one server 500 times; in process.',
    at1000: latency(data.tools, queries, 1000),
    at10000: latency(data.tools, queries, 10_000),
  };
}

export async function runToolSearch(options: { metatool?: string } = {}) {
  const data = loadMetaTool(options.metatool);
  const sets: Dataset[] = [metatoolSet(data)];
  for (const name of SETS) {
    const set = loadDataset(name);
    if (set) sets.push(set);
    else
      log(
        `tool-search: ${name} is not in TACK_TOOL_RETRIEVAL_DIR (default ../data/tool-retrieval), left out`,
      );
  }
  const tmp = tempDir('tool-search');
  try {
    log('tool-search: leave one data set out');
    const unseen = leaveOneOut(sets);
    log('tool-search: tuning on every set (the shipped ranking)');
    const all = tune(sets);
    const tuned = tunedOnAll(sets, all.ranking);

    // Usage-learned examples on MetaTool: the TUNE half of its queries stand in for past sessions (a search,
    // then that tool used), recorded per tool; the TEST queries are never seen. Scored with the shipped ranking.
    // An upper bound, not an unseen figure: TUNE and TEST share all 199 tools, and MetaTool's queries are many
    // paraphrases of a few intents per tool, so a TEST query often has a near twin among the learned examples.
    // The baseline gets the same examples in its one field, so the table shows what the examples give either.
    const files = writeMetaTool(tmp.dir, data);
    const tools = loadToolsFile(files.tools!);
    const q = (name: string) => loadQueriesFile(files[name]!);
    const [singleTest, multiTest, singleTune, multiTune] = [
      q('single-test'),
      q('multi-test'),
      q('single-tune'),
      q('multi-tune'),
    ];
    const taught = withExamples(tools, [...singleTune, ...multiTune]);
    const rankers = {
      tack: ToolSearchIndex.build(tools, { ranking: all.ranking }),
      tackWithExamples: ToolSearchIndex.build(taught, { ranking: all.ranking }),
      baseline: BaselineToolIndex.build(tools),
      baselineWithExamples: BaselineToolIndex.build(taught),
    };
    const learnedOn = (test: RetrievalQuery[]) =>
      Object.fromEntries(
        Object.entries(rankers).map(([name, index]) => [name, metricsRow(evaluate(index, test, KS, tools))]),
      );
    const learned = {
      upperBound: true,
      note: 'TUNE and TEST share every tool and paraphrase the same intents: an upper bound of learning from use, not an unseen figure',
      single: learnedOn(singleTest),
      multi: learnedOn(multiTest),
    };

    log('tool-search: context cost');
    const real = await realCatalog();
    const synthetic = syntheticCatalog(data.tools, 500, { perServer: 3 });
    const share = async (list: readonly SearchableTool[]) => {
      const cost = await contextCost(list, qwen3Tokens);
      return {
        ...cost,
        deferredIdleShare: round(cost.deferredIdleShare, 4),
        meanToolTokens: round(cost.meanToolTokens, 1),
      };
    };
    const context = {
      real: { servers: real.servers, ...(await share(real.tools)) },
      realPlus500: await share([...real.tools, ...synthetic]),
      sets: Object.fromEntries(
        await Promise.all(sets.map(async (set) => [set.name, await share(set.tools)] as const)),
      ),
    };

    log('tool-search: latency');
    const queries = singleTest.slice(0, 2000).map((x) => x.query);
    const latencies = {
      at1000: latency(data.tools, queries, 1000),
      at10000: latency(data.tools, queries, 10_000),
    };

    return {
      description:
        'Tool retrieval, leave one data set out: for each set, every weight and switch of the ranking is chosen by coordinate ascent on the other sets (objective: mean over sets of task-text Hit@5, task-text Recall@10 and capability-query Recall@5), then scored on the set left out (unseen). tuned = the shipped ranking (the same search on all sets) scored on each set (every set was in its tuning). task = the task text as one query; split = the task cut into capability queries by capabilityClauses, merged by reciprocal rank fusion. baseline = Okapi BM25 (k1 1.2, b 0.75, Lucene IDF) over one field: name, description and parameter names, split at camelCase/snake/kebab/digits, lower-cased, no stemming, no stop words (bench/tool-retrieval/baseline.ts); every row has it beside tack. meanPerQuery = the mean over sets weighted by queries. learnedExamples is an upper bound (TUNE and TEST share all 199 MetaTool tools and paraphrase the same intents). Sets: MetaTool (199 tools, 1 server; single- and two-tool queries), RestBench (TMDB + Spotify), tau-bench (retail + airline tasks), ToolLens (ToolBench endpoints under 314 servers); sources in TACK_TOOL_RETRIEVAL_DIR (default ../data/tool-retrieval)/*/SOURCE.txt. Context: tool definitions as {name, description, input_schema} JSON, Qwen3 tokens. Latency: synthetic catalogs (MetaTool plugins as servers of 5 tools), 2000 MetaTool queries, k = 5.',
      sets: Object.fromEntries(
        sets.map((s) => [
          s.name,
          {
            tools: s.tools.length,
            servers: new Set(s.tools.map((t) => t.server)).size,
            queries: s.queries.length,
            meanGold: round(s.queries.reduce((n, q) => n + q.gold.length, 0) / s.queries.length, 2),
          },
        ]),
      ),
      unseen,
      shipped: {
        ranking: all.ranking,
        fromPrior: diffFromPrior(all.ranking),
        // DEFAULT_RANKING must be this ranking; false means src/search/ranking.ts needs the values above.
        isDefault: JSON.stringify(mergeRanking(DEFAULT_RANKING)) === JSON.stringify(all.ranking),
        objective: round(all.objective, 3),
        evaluations: all.evaluations,
      },
      tuned,
      learnedExamples: learned,
      context,
      latency: latencies,
    };
  } finally {
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  // `node dist/bench/tool-search.js --write <dir>` only converts MetaTool, for bench/tool-retrieval/report.ts.
  const at = process.argv.indexOf('--write');
  if (at > 0) {
    const files = writeMetaTool(process.argv[at + 1] ?? 'metatool');
    process.stdout.write(`${JSON.stringify(files, null, 2)}\n`);
  } else process.stdout.write(`${JSON.stringify(await runToolSearch(), null, 2)}\n`);
}
