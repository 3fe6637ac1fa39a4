import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withHttp } from './options.js';

const serveCommand = lazy(() => import('../commands/serve.js'), 'serveCommand');

export const register: Register = (program, { setExitCode }) => {
  withHttp(
    program
      .command('serve')
      .description('serve every configured server as one MCP server (stdio, or --http), for any MCP host'),
  ).action(async (opts: { http?: string }, cmd: Command) =>
    setExitCode(await serveCommand({ ...optionsOf(cmd), ...(opts.http ? { http: opts.http } : {}) })),
  );
};
