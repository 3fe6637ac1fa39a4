import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const trustCommand = lazy(() => import('../commands/trust.js'), 'trustCommand');

interface TrustOptions {
  list?: boolean;
  revoke?: boolean;
  yes?: boolean;
  dryRun?: boolean;
}

export const register: Register = (program, { setExitCode }) => {
  program
    .command('trust')
    .description(
      'trust a project: show what its tack.json, .mcp.json and skills would run, ask, then record their hashes (a changed file asks again)',
    )
    .argument('[dir]', 'the project folder (default: the current one)')
    .option('--yes', 'trust without asking (scripts, CI)')
    .option('--dry-run', 'show what would be trusted; record nothing')
    .option('--list', 'the trusted projects, and whether their files changed since')
    .option('--revoke', 'forget the project: its servers, hooks, allow rules and skills wait again')
    .action(async (dir: string | undefined, opts: TrustOptions, cmd: Command) =>
      setExitCode(
        await trustCommand(dir, {
          ...optionsOf(cmd),
          list: opts.list === true,
          revoke: opts.revoke === true,
          yes: opts.yes === true,
          dryRun: opts.dryRun === true,
        }),
      ),
    );
};
