import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const initCommand = lazy(() => import('../commands/init.js'), 'initCommand');

export const register: Register = (program, { setExitCode }) => {
  program
    .command('init')
    .description(
      'set up the current folder: tack.json and AGENTS.md (never over a file that exists), and import the servers Claude Desktop, Claude Code, Cursor, VS Code or Codex have',
    )
    .option(
      '--import <sources>',
      'import without asking: claude-desktop, claude-code, cursor, vscode, codex (comma-separated) or all',
    )
    .option('--yes', 'import every server found without asking')
    .option('--force', 'replace servers of the same name in tack.json')
    .action(async (opts: { import?: string; yes?: boolean; force?: boolean }, cmd: Command) =>
      setExitCode(await initCommand({ ...optionsOf(cmd), ...opts })),
    );
};
