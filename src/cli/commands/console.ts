import { spawn } from 'node:child_process';
import { startConsole } from '../../console/server.js';
import { TackError } from '../../errors.js';
import { print, printErr, warn } from '../output.js';
import { untilStopped } from '../serving.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface ConsoleCommandOptions extends GlobalOptions {
  port?: string;
  open?: boolean;
}

/** `tack console [--port N] [--open]`: the local web console, until Ctrl-C. */
export async function consoleCommand(options: ConsoleCommandOptions): Promise<number> {
  const port = options.port === undefined ? 0 : Number(options.port);
  if (!Number.isInteger(port) || port < 0 || port > 65_535)
    throw new TackError('USAGE', `--port expects a port number, got ${JSON.stringify(options.port)}`, {
      hint: 'For example --port 7777 (0 picks a free port).',
    });
  const config = await loadCliConfig(options);
  const running = await startConsole({ config, port, onWarning: (warning) => warn(warning.message) });
  print(`tack console: ${running.url}`);
  printErr("The URL carries this session's token: anyone with it can use the console. Ctrl-C stops it.");
  if (options.open) openBrowser(running.url);
  await untilStopped(true);
  await running.close();
  return 0;
}

/** The desktop's opener, detached; a machine without one only misses the convenience. */
function openBrowser(url: string): void {
  const command =
    process.platform === 'darwin' ? 'open' : process.platform === 'win32' ? 'explorer' : 'xdg-open';
  try {
    const child = spawn(command, [url], { detached: true, stdio: 'ignore' });
    child.on('error', () => warn(`could not start ${command}: open ${url} by hand`));
    child.unref();
  } catch {
    warn(`could not start ${command}: open ${url} by hand`);
  }
}
