import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withAllowChanged } from './options.js';

const promptCommand = lazy(() => import('../commands/prompt.js'), 'promptCommand');

export const register: Register = (program, { setExitCode }) => {
  withAllowChanged(
    program
      .command('prompt')
      .description('get a prompt from a server')
      .argument('<server>', 'server name')
      .argument('<name>', 'prompt name')
      .argument('[json-args]', 'arguments as a JSON object of strings'),
  ).action(async (server: string, name: string, args: string | undefined, _opts: unknown, cmd: Command) =>
    setExitCode(await promptCommand(server, name, args, optionsOf(cmd))),
  );
};
