import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withAllowChanged } from './options.js';

const readCommand = lazy(() => import('../commands/read.js'), 'readCommand');

export const register: Register = (program, { setExitCode }) => {
  withAllowChanged(
    program
      .command('read')
      .description('read a resource by URI')
      .argument('<uri>', 'resource URI')
      .option('--server <name>', 'the server to ask (default: the one that lists the URI)'),
  ).action(async (uri: string, _opts: unknown, cmd: Command) =>
    setExitCode(await readCommand(uri, optionsOf(cmd))),
  );
};
