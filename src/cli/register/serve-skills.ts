import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withHttp } from './options.js';

const serveSkillsCommand = lazy(() => import('../commands/serve-skills.js'), 'serveSkillsCommand');

export const register: Register = (program, { setExitCode }) => {
  withHttp(
    program
      .command('serve-skills')
      .description(
        'serve every skill tack finds over MCP (the Skills extension, plus tools), stdio or --http',
      ),
  ).action(async (opts: { http?: string }, cmd: Command) =>
    setExitCode(await serveSkillsCommand({ ...optionsOf(cmd), ...(opts.http ? { http: opts.http } : {}) })),
  );
};
