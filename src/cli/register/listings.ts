import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withServerFilter } from './options.js';

const promptsCommand = lazy(() => import('../commands/listings.js'), 'promptsCommand');
const resourcesCommand = lazy(() => import('../commands/listings.js'), 'resourcesCommand');

/** `tack resources` and `tack prompts`: what the servers offer besides tools. */
export const register: Register = (program, { setExitCode }) => {
  withServerFilter(program.command('resources'))
    .description('list the resources and resource templates of every server')
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await resourcesCommand(optionsOf(cmd))));
  withServerFilter(program.command('prompts'))
    .description('list the prompts of every server, with their arguments')
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await promptsCommand(optionsOf(cmd))));
};
