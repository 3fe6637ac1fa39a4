import type { Command } from 'commander';
import { TackError } from '../../errors.js';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, positive, withAllowChanged, withServerFilter } from './options.js';

/* What the configured servers offer, and using it: servers, tools, resources, prompts, call, read, prompt. */

const serversCommand = lazy(() => import('../commands/servers.js'), 'serversCommand');
const toolsCommand = lazy(() => import('../commands/tools.js'), 'toolsCommand');
const toolsSecurityCommand = lazy(() => import('../commands/tools.js'), 'toolsSecurityCommand');
const toolsSearchCommand = lazy(() => import('../commands/tool-search.js'), 'toolsSearchCommand');
const toolsExamplesExportCommand = lazy(
  () => import('../commands/tool-search.js'),
  'toolsExamplesExportCommand',
);
const toolsExamplesImportCommand = lazy(
  () => import('../commands/tool-search.js'),
  'toolsExamplesImportCommand',
);
const promptsCommand = lazy(() => import('../commands/listings.js'), 'promptsCommand');
const resourcesCommand = lazy(() => import('../commands/listings.js'), 'resourcesCommand');
const callCommand = lazy(() => import('../commands/call.js'), 'callCommand');
const readCommand = lazy(() => import('../commands/read.js'), 'readCommand');
const promptCommand = lazy(() => import('../commands/prompt.js'), 'promptCommand');

export const registerServers: Register = (program, { setExitCode }) => {
  program
    .command('servers')
    .description('connect to every configured server and show its state, era and catalog size')
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await serversCommand(optionsOf(cmd))));
};

/**
 * `tack tools` lists and is a group too (search, examples): Commander would call a word that is neither
 * subcommand an excess argument of the listing, so it is named as the unknown command it is, with the choices.
 */
function rejectUnknown(cmd: Command): void {
  const [word] = cmd.args;
  if (word === undefined) return;
  const choices = cmd.commands.map((sub) => sub.name()).join(' or ');
  cmd.error(`error: unknown command '${word}' for 'tack ${cmd.name()}' (expected ${choices})`, {
    code: 'commander.unknownCommand',
  });
}

/** `tack tools`, `tack tools search <query...>` and `tack tools examples export|import`. */
export const registerTools: Register = (program, { setExitCode }) => {
  const tools = withServerFilter(program.command('tools'))
    .description(
      'list the tools the model sees, with the token cost of each definition; `tools search <query...>` ranks them; `tools examples export|import` shares what search learned',
    )
    .option('--security', 'capability labels (and where each came from), pin status and the trifecta legs');

  tools
    .command('search')
    .description(
      "rank the tools for one or more queries, as search_tools ranks them; --server <name>: one server's",
    )
    .argument('<query...>', 'one argument per query')
    .option('-k <n>', 'how many (default 10)')
    .option('--explain', 'why each tool matched (fields and words, expansion, server evidence)')
    .action(async (queries: string[], opts: { k?: string; explain?: boolean }, cmd: Command) => {
      if (queries.some((q) => q.trim() === ''))
        throw new TackError(
          'USAGE',
          'expected `tack tools`, `tack tools search "<query>" ["<query>" ...]` or `tack tools examples export|import`',
        );
      setExitCode(
        await toolsSearchCommand(queries, {
          ...optionsOf(cmd),
          ...(opts.k ? { k: positive('k', opts.k) } : {}),
          ...(opts.explain ? { explain: true } : {}),
        }),
      );
    });

  const examples = tools
    .command('examples')
    .description('share what search learned: the requests after which a tool was used, as JSONL');
  examples
    .command('export')
    .description('write the learned examples, one {"server", "tool", "query", "at"} per line')
    .argument('[file]', 'the file to write (default, or -: stdout)')
    .action(async (file: string | undefined, _opts: unknown, cmd: Command) =>
      setExitCode(await toolsExamplesExportCommand(file, optionsOf(cmd))),
    );
  examples
    .command('import')
    .description('keep the examples of an export as if recorded at their time (every line checked first)')
    .argument('<file>', 'a file `tack tools examples export` wrote (-: stdin)')
    .action(async (file: string, _opts: unknown, cmd: Command) =>
      setExitCode(await toolsExamplesImportCommand(file, optionsOf(cmd))),
    );

  // After the subcommands: they inherit this setting when created, and must keep refusing excess arguments.
  tools.allowExcessArguments().action(async (opts: { security?: boolean }, cmd: Command) => {
    rejectUnknown(cmd);
    const options = optionsOf(cmd);
    setExitCode(opts.security ? await toolsSecurityCommand(options) : await toolsCommand(options));
  });
};

/** `tack resources` and `tack prompts`: what the servers offer besides tools. */
export const registerListings: Register = (program, { setExitCode }) => {
  withServerFilter(program.command('resources'))
    .description('list the resources and resource templates of every server')
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await resourcesCommand(optionsOf(cmd))));
  withServerFilter(program.command('prompts'))
    .description('list the prompts of every server, with their arguments')
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await promptsCommand(optionsOf(cmd))));
};

export const registerCall: Register = (program, { setExitCode }) => {
  withAllowChanged(
    program
      .command('call')
      .description(
        'call a tool by its model-visible name, e.g. tack call mcp__docs__search_docs \'{"query":"x"}\'',
      )
      .argument('<tool>', 'model-visible tool name (mcp__<server>__<tool>)')
      .argument('[json-args]', 'arguments as a JSON object'),
  ).action(async (tool: string, args: string | undefined, _opts: unknown, cmd: Command) =>
    setExitCode(await callCommand(tool, args, optionsOf(cmd))),
  );
};

export const registerRead: Register = (program, { setExitCode }) => {
  withAllowChanged(
    program
      .command('read')
      .description('read a resource by URI')
      .argument('<uri>', 'resource URI')
      .option('--server <name>', 'the server to ask (default: the one that lists the URI)'),
  ).action(async (uri: string, _opts: unknown, cmd: Command) =>
    setExitCode(await readCommand(uri, optionsOf(cmd))),
  );
};

export const registerPrompt: Register = (program, { setExitCode }) => {
  withAllowChanged(
    program
      .command('prompt')
      .description('get a prompt from a server')
      .argument('<server>', 'server name')
      .argument('<name>', 'prompt name')
      .argument('[json-args]', 'arguments as a JSON object of strings'),
  ).action(async (server: string, name: string, args: string | undefined, _opts: unknown, cmd: Command) =>
    setExitCode(await promptCommand(server, name, args, optionsOf(cmd))),
  );
};
