import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const sandboxCheckCommand = lazy(() => import('../commands/sandbox.js'), 'sandboxCheckCommand');

/** `tack sandbox check`. */
export const register: Register = (program, { setExitCode }) => {
  const sandbox = program
    .command('sandbox')
    .description('the sandbox servers and skill scripts run in (bubblewrap on Linux)');
  sandbox
    .command('check')
    .description(
      'run a probe inside each sandbox policy and print what it can and cannot reach; exit 1 when that differs from the policy',
    )
    .argument('[server]', 'only this server')
    .option('--skill-scripts', "only the skill scripts' sandbox")
    .action(async (server: string | undefined, opts: { skillScripts?: boolean }, cmd: Command) =>
      setExitCode(
        await sandboxCheckCommand(server, { ...optionsOf(cmd), skillScripts: opts.skillScripts === true }),
      ),
    );
};
