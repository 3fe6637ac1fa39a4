import type { Command } from 'commander';
import { TackError } from '../../errors.js';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, positive, withServerFilter } from './options.js';

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
export const register: Register = (program, { setExitCode }) => {
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
