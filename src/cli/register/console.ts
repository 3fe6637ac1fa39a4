import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const consoleCommand = lazy(() => import('../commands/console.js'), 'consoleCommand');

export const register: Register = (program, { setExitCode }) => {
  program
    .command('console')
    .description(
      'open the web console: servers, costs, sessions, pins and knowledge in a browser (127.0.0.1)',
    )
    .option('--port <n>', 'port to listen on (default: a free one)')
    .option('--open', 'open the URL in the default browser')
    .action(async (opts: { port?: string; open?: boolean }, cmd: Command) =>
      setExitCode(
        await consoleCommand({
          ...optionsOf(cmd),
          ...(opts.port ? { port: opts.port } : {}),
          ...(opts.open ? { open: true } : {}),
        }),
      ),
    );
};
