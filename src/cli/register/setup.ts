import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf, repeated } from './options.js';

/* Setting tack up: the project's files (init), the servers of its configuration (mcp) and their logins (auth). */

const initCommand = lazy(() => import('../commands/init.js'), 'initCommand');
const mcpAddCommand = lazy(() => import('../commands/mcp.js'), 'mcpAddCommand');
const mcpGetCommand = lazy(() => import('../commands/mcp.js'), 'mcpGetCommand');
const mcpListCommand = lazy(() => import('../commands/mcp.js'), 'mcpListCommand');
const mcpRemoveCommand = lazy(() => import('../commands/mcp.js'), 'mcpRemoveCommand');
const authCommand = lazy(() => import('../commands/auth.js'), 'authCommand');

export const registerInit: Register = (program, { setExitCode }) => {
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

const withScope = (cmd: Command) =>
  cmd.option(
    '-s, --scope <scope>',
    "project (the project's .mcp.json, read by Claude Code too), tack (its tack.json) or user (your config.json)",
  );

interface AddOptions {
  transport?: string;
  scope?: string;
  env: string[];
  header: string[];
  force?: boolean;
}

/** `tack mcp add|remove|list|get`: the servers of tack's configuration files, as `claude mcp` edits Claude Code's. */
export const registerMcp: Register = (program, { setExitCode }) => {
  const mcp = program
    .command('mcp')
    .description("add, remove, list and show the servers of tack's configuration files (as `claude mcp`)");
  withScope(
    mcp
      .command('add')
      .description(
        'add a server: tack mcp add <name> -- <command> [args...], or tack mcp add --transport http <name> <url>',
      )
      .argument('<name>', 'server name (letters, digits, _ and -)')
      .argument('<command-or-url>', 'the command to start (stdio), or the URL (http, sse)')
      .argument('[args...]', "the command's arguments (after --)")
      .option('-t, --transport <transport>', 'stdio, http or sse (default: http for a lone URL, else stdio)')
      .option('-e, --env <KEY=value>', 'a variable for a stdio server; repeat for more', repeated, [])
      .option(
        '-H, --header <"Name: value">',
        'a header for an http or sse server; repeat for more',
        repeated,
        [],
      )
      .option('--force', 'replace a server of the same name in that file'),
  ).action(async (name: string, target: string, args: string[], opts: AddOptions, cmd: Command) =>
    setExitCode(await mcpAddCommand(name, target, args, { ...optionsOf(cmd), ...opts })),
  );
  withScope(
    mcp
      .command('remove')
      .description('remove a server; says which file it was removed from (default: the one file that has it)')
      .argument('<name>', 'server name'),
  ).action(async (name: string, opts: { scope?: string }, cmd: Command) =>
    setExitCode(await mcpRemoveCommand(name, { ...optionsOf(cmd), ...opts })),
  );
  mcp
    .command('list')
    .description(
      'every server of every configuration file: transport, command or URL, file, and whether it starts',
    )
    .action(async (_opts: unknown, cmd: Command) => setExitCode(await mcpListCommand(optionsOf(cmd))));
  mcp
    .command('get')
    .description(
      'one server as tack uses it: its file, resolved command or URL, state, and the entry as written',
    )
    .argument('<name>', 'server name')
    .action(async (name: string, _opts: unknown, cmd: Command) =>
      setExitCode(await mcpGetCommand(name, optionsOf(cmd))),
    );
};

export const registerAuth: Register = (program, { setExitCode }) => {
  program
    .command('auth')
    .description(
      'log in to a remote server that asks for OAuth; --logout and --list manage the stored tokens',
    )
    .argument('[server]', 'server name')
    .option('--logout', "forget the server's stored tokens")
    .option('--list', 'show the stored logins (never the tokens)')
    .option('--no-open', 'print the login URL without opening a browser')
    .action(
      async (
        server: string | undefined,
        opts: { logout?: boolean; list?: boolean; open?: boolean },
        cmd: Command,
      ) => setExitCode(await authCommand(server, { ...optionsOf(cmd), ...opts })),
    );
};
