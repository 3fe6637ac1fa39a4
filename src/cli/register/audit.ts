import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const auditCommand = lazy(() => import('../commands/audit.js'), 'auditCommand');

export const register: Register = (program, { setExitCode }) => {
  program
    .command('audit')
    .description('show the newest calls served by tack serve (time, client, server, tool, outcome)')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (opts: { limit?: string }, cmd: Command) =>
      setExitCode(await auditCommand({ ...optionsOf(cmd), ...(opts.limit ? { limit: opts.limit } : {}) })),
    );
};
