import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const scanCommand = lazy(() => import('../commands/scan.js'), 'scanCommand');

export const register: Register = (program, { setExitCode }) => {
  program
    .command('scan')
    .description(
      'check tool definitions for poisoning (hidden text, directives to the model, exfiltration); exit 1 on a block',
    )
    .option(
      '--tools <file.json>',
      'scan exported definitions offline (tools, prompts, resources) instead of the configured servers',
    )
    .option('--judge', 'send definitions the score leaves in doubt to scan.judge.model (cached by digest)')
    .action(async (opts: { tools?: string; judge?: boolean }, cmd: Command) =>
      setExitCode(
        await scanCommand({
          ...optionsOf(cmd),
          ...(opts.tools ? { tools: opts.tools } : {}),
          ...(opts.judge ? { judge: true } : {}),
        }),
      ),
    );
};
