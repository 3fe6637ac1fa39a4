import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withAllowChanged } from './options.js';

const callCommand = lazy(() => import('../commands/call.js'), 'callCommand');

export const register: Register = (program, { setExitCode }) => {
  withAllowChanged(
    program
      .command('call')
      .description(
        'call a tool by its model-visible name, e.g. tack call mcp__docs__search_docs \'{"query":"x"}\'',
      )
      .argument('<tool>', 'model-visible tool name (mcp__<server>__<tool>)')
      .argument('[json-args]', 'arguments as a JSON object'),
  ).action(async (tool: string, args: string | undefined, _opts: unknown, cmd: Command) =>
    setExitCode(await callCommand(tool, args, optionsOf(cmd))),
  );
};
