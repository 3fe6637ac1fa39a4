import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const benchToolSearchCommand = lazy(() => import('../commands/bench.js'), 'benchToolSearchCommand');

/** `tack bench tool-search`. */
export const registerBench: Register = (program, { setExitCode }) => {
  const bench = program.command('bench').description('offline benchmarks on your own data');
  bench
    .command('tool-search')
    .description(
      'retrieval quality (Hit@k, Recall@k, MRR) of tack, its ablations and plain BM25, for the task text and for capability queries; tool-definition tokens inline vs deferred',
    )
    .requiredOption(
      '--tools <tools.json>',
      'an array of {server, name, description, inputSchema?, title?}, or {servers: {<name>: {title?, description?, instructions?}}, tools: [...]}',
    )
    .requiredOption(
      '--queries <queries.jsonl>',
      'one {query, gold: ["server/tool", ...], queries?: [...]} per line',
    )
    .option('--k <list>', 'cut-offs, e.g. 1,5,10 (default)')
    .action(async (opts: { tools: string; queries: string; k?: string }, cmd: Command) =>
      setExitCode(await benchToolSearchCommand({ ...optionsOf(cmd), ...opts })),
    );
};
