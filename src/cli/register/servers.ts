import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const serversCommand = lazy(() => import('../commands/servers.js'), 'serversCommand');

export const register: Register = (program, { setExitCode }) => {
  program
    .command('servers')
    .description('connect to every configured server and show its state, era and catalog size')
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await serversCommand(optionsOf(cmd))));
};
