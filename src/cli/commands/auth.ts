import { spawn } from 'node:child_process';
import type { HttpServerConfig, ServerConfig, TackConfig } from '../../config/load.js';
import { TackError } from '../../errors.js';
import { McpHost, unknownServer } from '../../mcp/host.js';
import { type OAuthLoginRequest, oauthResource } from '../../mcp/oauth.js';
import type { OAuthTokenRecord } from '../../store/oauth-credentials.js';
import { openConfiguredStore, openStore } from '../../store/open.js';
import { print, printErr, printListing, table, warn } from '../output.js';
import { type GlobalOptions, loadCliConfig } from '../with-host.js';

export interface AuthOptions extends GlobalOptions {
  list?: boolean;
  logout?: boolean;
  /** false with --no-open: print the URL only (a remote shell, a headless box). */
  open?: boolean;
}

/** `tack auth <server>`, `tack auth --logout <server>`, `tack auth --list`. */
export async function authCommand(server: string | undefined, options: AuthOptions): Promise<number> {
  if (options.list) {
    if (server !== undefined || options.logout) throw usage('--list takes no server and no --logout');
    return authListCommand(options);
  }
  if (server === undefined) throw usage('name the server to log in to, e.g. `tack auth github`');
  return options.logout ? authLogoutCommand(server, options) : authLoginCommand(server, options);
}

/**
 * Logs in now, whatever is stored: connects to the one server with a host that may start a login, and
 * ignores stored tokens so a stale or unwanted grant is replaced (only once the new one arrives).
 */
export async function authLoginCommand(name: string, options: AuthOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const server = remoteServer(config, name);
  const host = new McpHost({
    config: { ...config, servers: [server] },
    oauth: {
      interactive: true,
      forceLogin: true,
      onAuthorizationUrl: (request) => showLogin(request, options.open !== false),
    },
    store: await openStore(config, (warning) => warn(warning.message)),
  });
  // Ctrl-C while the browser is out: closing the host cancels the wait and frees the loopback port.
  const interrupt = () => void host.close();
  process.once('SIGINT', interrupt);
  try {
    if (!host.store) {
      throw new TackError('STORE_FAILED', 'the tack store cannot be opened, so a login could not be kept', {
        hint: 'Check that the state directory is writable, or point TACK_HOME elsewhere.',
      });
    }
    const started = Date.now();
    await host.connectAll();
    const connection = host.connection(name);
    if (connection.status !== 'connected') {
      throw (
        connection.lastError ??
        new TackError('REQUEST_ABORTED', `the login to "${name}" was interrupted`, {
          subject: { server: name },
        })
      );
    }
    const saved = await host.store.oauth.getTokens(oauthResource(server.url));
    if (!saved || saved.updatedAt < started) {
      print(`server "${name}" connected without asking for a login; nothing was stored`);
      return 0;
    }
    print(
      `logged in to "${name}" (authorization server ${saved.issuer}); ${
        saved.tokens.refresh_token
          ? 'tokens saved, refreshed when they expire'
          : 'token saved (no refresh token: log in again when it expires)'
      }`,
    );
    return 0;
  } finally {
    process.off('SIGINT', interrupt);
    await host.close();
    await host.store?.close();
  }
}

/** Forgets the server's tokens and its client registration; the next connect needs `tack auth` again. */
export async function authLogoutCommand(name: string, options: GlobalOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const entry = config.servers.find((server) => server.name === name);
  const store = await openConfiguredStore(config);
  try {
    // A server no longer in the configuration can still be logged out of, by the name it was stored under.
    const resources =
      entry && entry.transport !== 'stdio'
        ? [oauthResource(entry.url)]
        : [
            ...new Set(
              (await store.oauth.listTokens()).flatMap((r) => (r.server === name ? [r.resource] : [])),
            ),
          ];
    if (!entry && resources.length === 0) throw unknownServer(name, names(config));
    let removed = 0;
    for (const resource of resources) {
      removed += await store.oauth.deleteTokens(resource);
      await store.oauth.deleteClients(resource);
    }
    print(
      removed > 0
        ? `logged out of "${name}": stored OAuth tokens removed`
        : `no OAuth tokens were stored for "${name}"`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** The stored token sets, without the tokens themselves. */
export async function authListCommand(options: GlobalOptions): Promise<number> {
  const config = await loadCliConfig(options);
  const store = await openConfiguredStore(config);
  try {
    const now = Date.now();
    const rows = (await store.oauth.listTokens()).map((record) => describe(record, config, now));
    return printListing(options, rows, 'No OAuth logins stored. Log in with `tack auth <server>`.', () =>
      table(
        ['SERVER', 'RESOURCE', 'ISSUER', 'ACCESS TOKEN', 'REFRESH', 'SAVED'],
        rows.map((row) => [
          row.servers.join(', '),
          row.resource,
          row.issuer,
          row.expiresAt === undefined
            ? 'no expiry given'
            : row.expiresAt > now
              ? `valid ${duration(row.expiresAt - now)}`
              : row.refreshable
                ? 'expired (refreshed on next use)'
                : 'expired',
          row.refreshable ? 'yes' : 'no',
          new Date(row.savedAt).toISOString(),
        ]),
      ),
    );
  } finally {
    await store.close();
  }
}

function describe(record: OAuthTokenRecord, config: TackConfig, now: number) {
  const configured = config.servers
    .filter((server) => server.transport !== 'stdio' && safeResource(server.url) === record.resource)
    .map((server) => server.name);
  return {
    servers: configured.length > 0 ? configured : [record.server],
    resource: record.resource,
    issuer: record.issuer,
    scope: record.tokens.scope,
    expiresAt: record.expiresAt,
    expired: record.expiresAt !== undefined && record.expiresAt <= now,
    refreshable: record.tokens.refresh_token !== undefined,
    savedAt: record.updatedAt,
  };
}

function remoteServer(config: TackConfig, name: string): HttpServerConfig {
  const entry: ServerConfig | undefined = config.servers.find((server) => server.name === name);
  if (!entry) throw unknownServer(name, names(config));
  if (entry.transport === 'stdio') {
    throw usage(`server "${name}" runs locally over stdio; OAuth is for remote (http, sse) servers`);
  }
  if (entry.oauth === false) {
    throw usage(
      `OAuth is off for server "${name}" (its entry says "oauth": false or sends its own Authorization header)`,
    );
  }
  if (!entry.enabled) {
    throw new TackError('SERVER_DISABLED', `server "${name}" is disabled in the configuration`, {
      subject: { server: name, file: entry.source.file },
      hint: `Enable mcpServers.${name} first.`,
    });
  }
  return entry;
}

function showLogin(request: OAuthLoginRequest, open: boolean): void {
  printErr(
    `Log in to "${request.server}" in your browser${open ? ' (opening it)' : ''}:\n  ${request.url.href}\n`,
  );
  if (open) openBrowser(request.url.href);
}

/** Best effort: without a browser (ssh, CI) the printed URL is the way. */
function openBrowser(url: string): void {
  // rundll32 rather than `cmd /c start`, which would read the & in the query as a command separator.
  const [command, args]: [string, string[]] =
    process.platform === 'darwin'
      ? ['open', [url]]
      : process.platform === 'win32'
        ? ['rundll32', ['url.dll,FileProtocolHandler', url]]
        : ['xdg-open', [url]];
  try {
    const child = spawn(command, args, { stdio: 'ignore', detached: true });
    child.on('error', () => {});
    child.unref();
  } catch {
    // no opener on this machine
  }
}

function duration(ms: number): string {
  const minutes = Math.round(ms / 60_000);
  if (minutes < 1) return 'under a minute';
  if (minutes < 120) return `${minutes} min`;
  const hours = Math.round(minutes / 60);
  return hours < 48 ? `${hours} h` : `${Math.round(hours / 24)} days`;
}

function safeResource(url: string): string | undefined {
  try {
    return oauthResource(url);
  } catch {
    return undefined;
  }
}

function names(config: TackConfig): string[] {
  return config.servers.map((server) => server.name);
}

function usage(message: string): TackError {
  return new TackError('USAGE', message, {
    hint: 'tack auth <server> | tack auth --logout <server> | tack auth --list',
  });
}
