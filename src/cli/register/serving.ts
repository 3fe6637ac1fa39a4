import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, withHttp } from './options.js';

/* tack as a server and a front end: serve, console, audit, serve-docs, serve-skills, serve-knowledge. */

const serveCommand = lazy(() => import('../commands/serve.js'), 'serveCommand');
const consoleCommand = lazy(() => import('../commands/console.js'), 'consoleCommand');
const auditCommand = lazy(() => import('../commands/audit.js'), 'auditCommand');
const serveDocsCommand = lazy(() => import('../commands/serve-docs.js'), 'serveDocsCommand');
const serveSkillsCommand = lazy(() => import('../commands/serve-skills.js'), 'serveSkillsCommand');
const serveKnowledgeCommand = lazy(() => import('../commands/serve-knowledge.js'), 'serveKnowledgeCommand');

export const registerServe: Register = (program, { setExitCode }) => {
  withHttp(
    program
      .command('serve')
      .description('serve every configured server as one MCP server (stdio, or --http), for any MCP host'),
  ).action(async (opts: { http?: string }, cmd: Command) =>
    setExitCode(await serveCommand({ ...optionsOf(cmd), ...(opts.http ? { http: opts.http } : {}) })),
  );
};

export const registerConsole: Register = (program, { setExitCode }) => {
  program
    .command('console')
    .description(
      'open the web console: servers, costs, sessions, pins and knowledge in a browser (127.0.0.1)',
    )
    .option('--port <n>', 'port to listen on (default: a free one)')
    .option('--open', 'open the URL in the default browser')
    .action(async (opts: { port?: string; open?: boolean }, cmd: Command) =>
      setExitCode(
        await consoleCommand({
          ...optionsOf(cmd),
          ...(opts.port ? { port: opts.port } : {}),
          ...(opts.open ? { open: true } : {}),
        }),
      ),
    );
};

export const registerAudit: Register = (program, { setExitCode }) => {
  program
    .command('audit')
    .description('show the newest calls served by tack serve (time, client, server, tool, outcome)')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (opts: { limit?: string }, cmd: Command) =>
      setExitCode(await auditCommand({ ...optionsOf(cmd), ...(opts.limit ? { limit: opts.limit } : {}) })),
    );
};

export const registerServeDocs: Register = (program, { setExitCode }) => {
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

export const registerServeSkills: Register = (program, { setExitCode }) => {
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

export const registerServeKnowledge: Register = (program, { setExitCode }) => {
  withHttp(
    program
      .command('serve-knowledge')
      .description('serve OKF knowledge bundles over MCP: search_knowledge, read_concept, okf:// resources')
      .argument(
        '[bundle...]',
        'bundle folders, `path` or `name=path` (default: tack.json knowledge.bundles)',
      ),
  )
    .option(
      '--sqlite <file>',
      'run sqlite computations on this database (default: knowledge.runtimes.sqlite)',
    )
    .option(
      '--postgres <url>',
      'run postgres computations here (default: $TACK_POSTGRES_URL, then knowledge.runtimes.postgres)',
    )
    .action(
      async (bundles: string[], opts: { http?: string; sqlite?: string; postgres?: string }, cmd: Command) =>
        setExitCode(await serveKnowledgeCommand({ ...optionsOf(cmd), bundles, ...opts })),
    );
};
