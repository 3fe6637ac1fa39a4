import { parseArgs } from 'node:util';
import { print, printJson, table } from '../../src/cli/output.js';
import { TackError } from '../../src/errors.js';
import { countTokens } from '../../src/tokens/count.js';
import { isMain } from '../util.js';
import {
  compareRetrieval,
  contextCost,
  loadCatalogFile,
  loadQueriesFile,
  type RetrievalMetrics,
  type RetrievalRows,
} from './metrics.js';

export interface BenchToolSearchOptions {
  json?: boolean;
  tools: string;
  queries: string;
  /** `1,5,10`. */
  k?: string;
}

/**
 * `node dist/bench/tool-retrieval/report.js --tools tools.json --queries queries.jsonl [--k 1,5,10] [--json]`
 * (after a build): any retrieval set, offline:
 * tack's ranking, tack with each part switched off (the ablations) and the Okapi BM25 baseline (baseline.ts) side by side, with
 * the task text as the query and with the task split into capability queries; and the catalog's definition
 * tokens inline vs deferred. Formats: docs/tool-search.md.
 */
export async function benchToolSearchCommand(options: BenchToolSearchOptions): Promise<number> {
  const ks = (options.k ?? '1,5,10').split(',').map((v) => Number(v.trim()));
  if (ks.some((k) => !Number.isInteger(k) || k < 1))
    throw new TackError('USAGE', `--k expects positive integers separated by commas, got "${options.k}"`);
  const { tools, servers } = loadCatalogFile(options.tools);
  const queries = loadQueriesFile(options.queries);
  const retrieval = compareRetrieval(tools, queries, ks, { servers });
  const cost = await contextCost(tools, countTokens);
  if (options.json) {
    printJson({ tools: tools.length, queries: queries.length, ks, retrieval, context: cost });
    return 0;
  }
  const row = (name: string, m: RetrievalMetrics) => [
    name,
    ...ks.map((k) => m.hitAt[k]!.toFixed(3)),
    ...ks.map((k) => m.recallAt[k]!.toFixed(3)),
    m.mrr.toFixed(3),
  ];
  const rows = (r: RetrievalRows) =>
    table(
      ['RANKER', ...ks.map((k) => `HIT@${k}`), ...ks.map((k) => `RECALL@${k}`), 'MRR'],
      [
        row('tack', r.tack),
        ...Object.entries(r.ablations).map(([name, m]) => row(`  ${name}`, m)),
        row('baseline: BM25', r.baseline),
      ],
    );
  print(
    `${tools.length} tools on ${new Set(tools.map((t) => t.server)).size} servers, ${queries.length} queries\n`,
  );
  print(`The task text as one query:\n${rows(retrieval)}`);
  print(
    `\nThe task split into capability queries (each query's "queries", else its clauses), merged:\n${rows(retrieval.split)}`,
  );
  if (retrieval.unknownGold.length > 0)
    print(
      `\nwarning: gold tools not in the catalog (counted as misses): ${retrieval.unknownGold.slice(0, 10).join(', ')}`,
    );
  print(
    `\n${table(
      ['TOOL DEFINITIONS PER TURN', 'TOKENS', 'SHARE'],
      [
        ['inline (every definition)', String(cost.inlineTokens), '100 %'],
        [
          'deferred, idle (search_tools + call_tool)',
          String(cost.deferredIdleTokens),
          `${(cost.deferredIdleShare * 100).toFixed(1)} %`,
        ],
        [
          `deferred, ${cost.loaded} tools loaded`,
          String(cost.deferredLoadedTokens),
          `${((cost.deferredLoadedTokens / Math.max(1, cost.inlineTokens)) * 100).toFixed(1)} %`,
        ],
      ],
    )}`,
  );
  print(
    '\nbaseline: Okapi BM25 (k1 1.2, b 0.75) over name, description and parameter names, identifiers split, no stemming (bench/tool-retrieval/baseline.ts).',
  );
  print('Tokens counted with the Qwen3 tokenizer.');
  return 0;
}

if (isMain(import.meta.url)) {
  try {
    const { values } = parseArgs({
      options: {
        tools: { type: 'string' },
        queries: { type: 'string' },
        k: { type: 'string' },
        json: { type: 'boolean' },
      },
    });
    if (!values.tools || !values.queries)
      throw new TackError(
        'USAGE',
        'usage: report.js --tools <tools.json> --queries <queries.jsonl> [--k 1,5,10] [--json]',
      );
    process.exitCode = await benchToolSearchCommand({
      tools: values.tools,
      queries: values.queries,
      ...(values.k ? { k: values.k } : {}),
      ...(values.json ? { json: true } : {}),
    });
  } catch (error) {
    process.stderr.write(`${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = error instanceof TackError && error.code === 'USAGE' ? 2 : 1;
  }
}
