import { Command, CommanderError } from 'commander';
import { VERSION } from '../version.js';
import { auditCommand } from './commands/audit.js';
import { callCommand } from './commands/call.js';
import { promptsCommand, resourcesCommand } from './commands/listings.js';
import { promptCommand } from './commands/prompt.js';
import { readCommand } from './commands/read.js';
import { serveCommand } from './commands/serve.js';
import { serveDocsCommand } from './commands/serve-docs.js';
import { serversCommand } from './commands/servers.js';
import { toolsCommand } from './commands/tools.js';
import { reportError } from './output.js';

interface CliOptions {
  config?: string;
  json?: boolean;
  server?: string;
}

/** Commander hands every action its command last; optsWithGlobals() merges options given before or after it. */
function optionsOf(args: unknown[]): CliOptions {
  const raw = (args.at(-1) as Command).optsWithGlobals<Record<string, unknown>>();
  const text = (value: unknown) => (typeof value === 'string' ? value : undefined);
  return {
    ...(text(raw.config) ? { config: text(raw.config) } : {}),
    ...(raw.json === true ? { json: true } : {}),
    ...(text(raw.server) ? { server: text(raw.server) } : {}),
  };
}

/** Builds the `tack` command line. Every command is a thin layer over a library call (see src/index.ts). */
export function buildProgram(setExitCode: (code: number) => void): Command {
  const program = new Command('tack')
    .description('An MCP host and agent harness: tools (MCP), know-how (Agent Skills) and knowledge (OKF).')
    .version(VERSION)
    .showHelpAfterError()
    .exitOverride()
    .option('--config <file>', 'use this configuration file alone (tack.json or .mcp.json format)')
    .option('--json', 'print machine-readable JSON');

  const action =
    (fn: (positional: string[], options: CliOptions) => Promise<number>) =>
    async (...args: unknown[]) => {
      const positional = args.filter((arg): arg is string => typeof arg === 'string' || arg === undefined);
      setExitCode(await fn(positional as string[], optionsOf(args)));
    };

  program
    .command('servers')
    .description('connect to every configured server and show its state, era and catalog size')
    .action(action((_, options) => serversCommand(options)));

  program
    .command('tools')
    .description('list the tools the model sees, with the token cost of each definition')
    .option('--server <name>', 'only this server')
    .action(action((_, options) => toolsCommand(options)));

  program
    .command('resources')
    .description('list the resources and resource templates of every server')
    .option('--server <name>', 'only this server')
    .action(action((_, options) => resourcesCommand(options)));

  program
    .command('prompts')
    .description('list the prompts of every server, with their arguments')
    .option('--server <name>', 'only this server')
    .action(action((_, options) => promptsCommand(options)));

  program
    .command('call')
    .description(
      'call a tool by its model-visible name, e.g. tack call mcp__docs__search_docs \'{"query":"x"}\'',
    )
    .argument('<tool>', 'model-visible tool name (mcp__<server>__<tool>)')
    .argument('[json-args]', 'arguments as a JSON object')
    .action(action(([tool, args], options) => callCommand(tool!, args, options)));

  program
    .command('read')
    .description('read a resource by URI')
    .argument('<uri>', 'resource URI')
    .option('--server <name>', 'the server to ask (default: the one that lists the URI)')
    .action(action(([uri], options) => readCommand(uri!, options)));

  program
    .command('prompt')
    .description('get a prompt from a server')
    .argument('<server>', 'server name')
    .argument('<name>', 'prompt name')
    .argument('[json-args]', 'arguments as a JSON object of strings')
    .action(action(([server, name, args], options) => promptCommand(server!, name!, args, options)));

  program
    .command('serve')
    .description('serve every configured server as one MCP server (stdio, or --http), for any MCP host')
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
    )
    .action(async (opts: { http?: string }, cmd: Command) =>
      setExitCode(await serveCommand({ ...optionsOf([cmd]), ...(opts.http ? { http: opts.http } : {}) })),
    );

  program
    .command('audit')
    .description('show the newest calls served by tack serve (time, client, server, tool, outcome)')
    .option('--limit <n>', 'how many (default 20)')
    .action(async (opts: { limit?: string }, cmd: Command) =>
      setExitCode(await auditCommand({ ...optionsOf([cmd]), ...(opts.limit ? { limit: opts.limit } : {}) })),
    );

  program
    .command('serve-docs')
    .description('serve a folder of Markdown/MDX as an MCP docs search server (stdio, or --http)')
    .argument('<folder>', 'folder of .md / .mdx documents')
    .option(
      '--http <[host:]port>',
      'serve Streamable HTTP on this address instead of stdio (host defaults to 127.0.0.1)',
    )
    .option('--no-watch', 'do not re-index when files change')
    .action(async (folder: string, opts: { http?: string; watch?: boolean }) =>
      setExitCode(await serveDocsCommand(folder, opts)),
    );

  for (const command of program.commands) command.exitOverride();
  return program;
}

/** Runs the CLI and returns its exit code: 0 ok, 1 failure, 2 usage or configuration error, 130 interrupted. */
export async function main(argv: readonly string[] = process.argv): Promise<number> {
  // `tack tools | head` closes stdout early: that is the reader's choice, not an error worth a stack trace.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  let code = 0;
  const program = buildProgram((c) => {
    code = c;
  });
  try {
    await program.parseAsync([...argv]);
    return code;
  } catch (error) {
    // Commander has already printed its usage error, help or version (the last two exit 0).
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    return reportError(error);
  }
}
