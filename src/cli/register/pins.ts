import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const pinsAcceptCommand = lazy(() => import('../commands/pins.js'), 'pinsAcceptCommand');
const pinsDiffCommand = lazy(() => import('../commands/pins.js'), 'pinsDiffCommand');
const pinsListCommand = lazy(() => import('../commands/pins.js'), 'pinsListCommand');

/** `tack pins list|diff|accept`: pinned definitions (trust on first use). */
export const register: Register = (program, { setExitCode }) => {
  const pins = program
    .command('pins')
    .description('pinned tool definitions (trust on first use): list, diff and accept what changed');
  pins
    .command('list')
    .description("this project's pins and their status; exit 1 when something is held back")
    .argument('[server]', 'only this server')
    .option('--check', 'connect the servers first: pin what is new, hold what changed')
    .option('--all', "every project's pins, with the projects each was seen in")
    .action(async (server: string | undefined, opts: { check?: boolean; all?: boolean }, cmd: Command) =>
      setExitCode(
        await pinsListCommand(server, {
          ...optionsOf(cmd),
          check: opts.check === true,
          all: opts.all === true,
        }),
      ),
    );
  pins
    .command('diff')
    .description('the pinned definition against the one held back')
    .argument('[server]', 'only this server')
    .argument('[name]', 'only this tool or prompt')
    .action(async (server: string | undefined, name: string | undefined, _opts: unknown, cmd: Command) =>
      setExitCode(await pinsDiffCommand(server, name, optionsOf(cmd))),
    );
  pins
    .command('accept')
    .description('accept what is held back: it becomes the pin and is offered again')
    .argument('<server>', 'the server')
    .argument('[name]', 'only this tool or prompt')
    .option('--kind <kind>', 'only this kind: tool, instructions, prompt, resource, resource-template')
    .option('--sha <prefix>', 'only the version with this sha256 (as `tack pins diff` showed it)')
    .action(
      async (server: string, name: string | undefined, opts: { kind?: string; sha?: string }, cmd: Command) =>
        setExitCode(
          await pinsAcceptCommand(server, name, {
            ...optionsOf(cmd),
            ...(opts.kind ? { kind: opts.kind } : {}),
            ...(opts.sha ? { sha: opts.sha } : {}),
          }),
        ),
    );
};
