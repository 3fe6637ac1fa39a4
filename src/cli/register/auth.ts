import type { Command } from 'commander';
import type { Register } from './context.js';
import { lazy } from './lazy.js';
import { optionsOf } from './options.js';

const authCommand = lazy(() => import('../commands/auth.js'), 'authCommand');

export const register: Register = (program, { setExitCode }) => {
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
