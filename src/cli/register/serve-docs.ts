import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withHttp } from './options.js';

const serveDocsCommand = lazy(() => import('../commands/serve-docs.js'), 'serveDocsCommand');

export const register: Register = (program, { setExitCode }) => {
  withHttp(
    program
      .command('serve-docs')
      .description('serve a folder of Markdown/MDX as an MCP docs search server (stdio, or --http)')
      .argument('<folder>', 'folder of .md / .mdx documents'),
  )
    .option('--no-watch', 'do not re-index when files change')
    .action(async (folder: string, opts: { http?: string; watch?: boolean }, cmd: Command) =>
      setExitCode(await serveDocsCommand(folder, { ...optionsOf(cmd), ...opts })),
    );
};
