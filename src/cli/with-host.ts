import {
  invalidProjectFilesWarnings,
  projectTrustWarning,
  resolveProjectTrust,
} from '../config/apply-trust.js';
import { formatIssue, loadConfig, type TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import { McpHost, unknownServer } from '../mcp/host.js';
import { openConfiguredStore, openStore, type StoreLocation } from '../store/open.js';
import type { TackStore } from '../store/store.js';
import { isTerminal, printErr, warn } from './output.js';
import { startProgress } from './spinner.js';

export interface GlobalOptions {
  config?: string;
  json?: boolean;
  quietFailures?: boolean;
  /** Trust the project for this run (`--trust-project`): its servers, hooks, allow rules and skills. */
  trustProject?: boolean;
}

/** Options of the commands that can be narrowed to one server. */
export interface ServerOptions extends GlobalOptions {
  server?: string;
}

/**
 * Loads the configuration, printing its warnings; a broken configuration throws before anything starts. What an
 * untrusted project's files add is held back here (config/apply-trust.ts), so every command sees the same thing.
 */
export async function loadCliConfig(options: GlobalOptions): Promise<TackConfig> {
  const loaded = loadConfig({
    ...(options.config ? { configFile: options.config } : {}),
    deferProjectIssues: true,
  });
  for (const warning of loaded.warnings) warn(formatIssue(warning));
  let store: TackStore | undefined;
  try {
    const config = await resolveProjectTrust(loaded, {
      trustProject: options.trustProject === true,
      // Opened only when the project has files to check: most commands in most folders never touch the store.
      records: async () => {
        store = await openConfiguredStore(loaded);
        return store.trustedProjects;
      },
    });
    for (const message of invalidProjectFilesWarnings(config)) warn(message);
    const message = projectTrustWarning(config);
    // Once per process: `tack eval` loads the configuration once per case.
    if (message && !warned.has(message)) {
      warned.add(message);
      warn(message);
    }
    return config;
  } finally {
    await store?.close();
  }
}

const warned = new Set<string>();

/**
 * Where the store is, for the commands about the store itself (audit, trust): the user file, a --config file and
 * TACK_STORE_URL decide (a project's files never do), without resolving the project's trust first.
 */
export function cliStoreLocation(options: GlobalOptions): StoreLocation & { paths: TackConfig['paths'] } {
  const loaded = loadConfig({
    ...(options.config ? { configFile: options.config } : {}),
    deferProjectIssues: true,
  });
  return { paths: loaded.paths, store: loaded.store };
}

/**
 * Runs `fn` with a host whose servers (all, or only `only`) are connected, then closes it whatever happens.
 * Servers that fail are reported on stderr and left out; the command goes on with the rest.
 */
export async function withHost<T>(
  options: GlobalOptions,
  only: readonly string[] | undefined,
  fn: (host: McpHost, signal: AbortSignal, config: TackConfig) => Promise<T>,
): Promise<T> {
  const config = await loadCliConfig(options);
  const wanted = only ? config.servers.filter((server) => only.includes(server.name)) : config.servers;
  const missing = only?.find((name) => !config.servers.some((server) => server.name === name));
  if (missing)
    throw unknownServer(
      missing,
      config.servers.map((server) => server.name),
    );
  // A server asking for OAuth may start a browser login only when a person is at the terminal; otherwise it
  // fails with AUTH_REQUIRED, whose hint names `tack auth <server>`.
  // Opened here, at the composition root, and closed with the host: nothing below opens a store of its own.
  const store = await openStore(config, (warning) => warn(warning.message));
  const host = new McpHost({
    config: { ...config, servers: wanted },
    oauth: {
      interactive: process.stdin.isTTY === true && isTerminal('stderr'),
      onAuthorizationUrl: (request) =>
        printErr(
          `tack: server "${request.server}" needs a login. Open this URL in a browser:\n  ${request.url.href}`,
        ),
    },
    store,
  });
  const enabled = wanted.filter((server) => server.enabled).length;
  const progress = startProgress(`connecting ${enabled} server${enabled === 1 ? '' : 's'}…`);
  let ready = 0;
  const unsubscribe = host.on((event) => {
    if (event.type === 'status' && (event.status === 'connected' || event.status === 'failed')) {
      progress.update(`connecting ${enabled} servers… ${++ready} done`);
    }
  });
  // First Ctrl-C cancels the request in flight (the server is told); a second one leaves at once.
  const controller = new AbortController();
  const abort = () => {
    if (controller.signal.aborted) process.exit(130);
    controller.abort(new TackError('REQUEST_ABORTED', 'interrupted'));
  };
  process.on('SIGINT', abort);
  try {
    // Ctrl-C while servers start: stop waiting; closing the host below kills what was starting.
    const interrupted = new Promise<never>((_, reject) =>
      controller.signal.addEventListener('abort', () => reject(controller.signal.reason), { once: true }),
    );
    interrupted.catch(() => {});
    await Promise.race([host.connectAll(), interrupted]);
    progress.stop();
    unsubscribe();
    for (const server of host.servers()) {
      // `tack servers` shows failures in its own report; every other command warns and goes on.
      if (server.status === 'failed' && server.error && !options.quietFailures) warn(server.error.message);
      for (const diagnostic of server.diagnostics) warn(`server "${server.name}" ${diagnostic}`);
    }
    return await fn(host, controller.signal, config);
  } finally {
    progress.stop();
    process.off('SIGINT', abort);
    await host.close();
    await store?.close();
  }
}

/** Parses a JSON-object argument given on the command line. */
export function parseJsonObject(text: string | undefined, what: string): Record<string, unknown> | undefined {
  if (text === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new TackError('USAGE', `${what} must be a JSON object: ${(error as Error).message}`, {
      hint: `Quote it for the shell, e.g. '{"text": "hi"}'.`,
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new TackError('USAGE', `${what} must be a JSON object, got ${JSON.stringify(value)}`, {
      hint: `Pass named arguments, e.g. '{"text": "hi"}'.`,
    });
  }
  return value as Record<string, unknown>;
}
