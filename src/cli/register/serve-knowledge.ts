import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withHttp } from './options.js';

const serveKnowledgeCommand = lazy(() => import('../commands/serve-knowledge.js'), 'serveKnowledgeCommand');

export const register: Register = (program, { setExitCode }) => {
  withHttp(
    program
      .command('serve-knowledge')
      .description('serve OKF knowledge bundles over MCP: search_knowledge, read_concept, okf:// resources')
      .argument(
        '[bundle...]',
        'bundle folders, `path` or `name=path` (default: tack.json knowledge.bundles)',
      ),
  )
    .option(
      '--sqlite <file>',
      'run sqlite computations on this database (default: knowledge.runtimes.sqlite)',
    )
    .option(
      '--postgres <url>',
      'run postgres computations here (default: $TACK_POSTGRES_URL, then knowledge.runtimes.postgres)',
    )
    .action(
      async (bundles: string[], opts: { http?: string; sqlite?: string; postgres?: string }, cmd: Command) =>
        setExitCode(await serveKnowledgeCommand({ ...optionsOf(cmd), bundles, ...opts })),
    );
};
