import {
  SSEClientTransport,
  StreamableHTTPClientTransport,
  type Transport,
} from '@modelcontextprotocol/client';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { HttpServerConfig, StdioServerConfig } from '../config/load.js';
import type { SandboxPolicy } from '../config/sandbox.js';
import { sandboxEnvironment } from '../sandbox/launch.js';
import type { TackOAuthProvider } from './oauth.js';
import { LinearReadBuffer } from './read-buffer.js';
import { replaceStdioReadBuffer, stdioChildProcess } from './sdk-internals.js';
import type { ServerLog } from './server-log.js';

/**
 * The largest single message tack accepts from a stdio server. The SDK's default is 10 MB, which a 10 MB tool
 * result (JSON-escaped, inside its envelope) already exceeds; past this limit the connection is closed and
 * the server restarted on next use, since the rest of the stream cannot be trusted.
 */
export const DEFAULT_MAX_MESSAGE_BYTES = 64 * 1024 * 1024;

export type TransportKind = 'stdio' | 'streamable-http' | 'sse';

export interface StdioHooks {
  log: ServerLog;
  /** A line on stdout that cannot be a JSON-RPC message (a banner, a stray console.log). */
  onStdoutNoise(line: string): void;
  onExit(code: number | null, signal: NodeJS.Signals | null): void;
  maxMessageBytes?: number;
}

/** Where a variable of a stdio server's environment comes from; `sandbox`: set by its sandbox (TMPDIR, proxy). */
export type EnvSource = 'safe-default' | 'configured' | 'sandbox';

export interface StdioEnvironment {
  /** Exactly what the child process gets. */
  env: Record<string, string>;
  /** Every variable's name and origin, sorted by name; a configured value that replaces a default is `configured`. */
  variables: Array<{ name: string; source: EnvSource }>;
}

/**
 * The environment a stdio server is spawned with: the SDK's safe default set (PATH, HOME, USER, SHELL, TERM,
 * LOGNAME, those that are set) plus the entry's own `env`, never tack's whole environment, where API keys live.
 * `tack scan` lists it from this same function, so the listing cannot drift from what the child gets.
 */
export function stdioEnvironment(
  config: Pick<StdioServerConfig, 'env'> & { sandbox?: SandboxPolicy | undefined },
): StdioEnvironment {
  const defaults = getDefaultEnvironment();
  const env = { ...defaults, ...config.env };
  // Listed, not added: the sandbox sets them at spawn time, only when it is enforced.
  const fromSandbox = config.sandbox ? sandboxEnvironment(config.sandbox) : {};
  const variables = [...new Set([...Object.keys(env), ...Object.keys(fromSandbox)])].sort().map((name) => ({
    name,
    source: Object.hasOwn(fromSandbox, name)
      ? ('sandbox' as const)
      : Object.hasOwn(config.env, name)
        ? ('configured' as const)
        : ('safe-default' as const),
  }));
  return { env, variables };
}

/** What a stdio transport spawns: a server's own command line, or its sandbox's around it (sandbox/launch.ts). */
export interface StdioSpawn {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
}

/** A stdio transport whose child gets exactly `spawn.env` (`stdioEnvironment`, plus its sandbox's). */
export function createStdioTransport(spawn: StdioSpawn, hooks: StdioHooks): StdioClientTransport {
  const transport = new StdioClientTransport({
    command: spawn.command,
    args: [...spawn.args],
    // The SDK spreads its defaults under this again: the same set, so the child gets exactly this.
    env: spawn.env,
    cwd: spawn.cwd,
    stderr: 'pipe',
    maxBufferSize: hooks.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES,
  });
  transport.stderr?.on('data', (chunk: Buffer) => hooks.log.writeStderr(chunk));
  observeChild(transport, hooks);
  // The SDK's stdio read buffer is quadratic in the message size; tack's is linear (read-buffer.ts).
  replaceStdioReadBuffer(transport, new LinearReadBuffer(hooks.maxMessageBytes ?? DEFAULT_MAX_MESSAGE_BYTES));
  return transport;
}

/**
 * The SDK drops stdout lines that are not JSON without a word, and reports neither the exit code nor the
 * signal of its child. tack needs both for its diagnostics, so it watches the child the transport spawned.
 * It patches `start` on this one instance rather than subclassing: the SDK runs its era probe on a disposable
 * sibling process only for the exact base class (a subclass would probe in place and could kill a server
 * that exits on an unknown pre-initialize request). The child is the SDK's private one (stdioChildProcess).
 */
function observeChild(transport: StdioClientTransport, hooks: StdioHooks): void {
  const start = transport.start.bind(transport);
  transport.start = async () => {
    await start();
    const child = stdioChildProcess(transport);
    if (!child) return;
    child.stdout?.on('data', stdoutNoiseScanner(hooks.onStdoutNoise));
    child.once('exit', (code, signal) => hooks.onExit(code, signal));
  };
}

const MAX_QUOTED = 300;

/**
 * Finds stdout lines that cannot be JSON-RPC: every message is a JSON object, so a line whose first
 * non-blank byte is not `{` is noise. Only the first byte of each line is inspected, which keeps this off
 * the hot path even for a 10 MB message.
 */
export function stdoutNoiseScanner(onNoise: (line: string) => void): (chunk: Buffer) => void {
  let state: 'start' | 'message' | 'noise' = 'start';
  let quoted = '';
  return (chunk) => {
    let pos = 0;
    while (pos < chunk.length) {
      if (state === 'start') {
        const byte = chunk[pos]!;
        if (byte === 0x0a || byte === 0x0d || byte === 0x20 || byte === 0x09) {
          pos++;
          continue;
        }
        state = byte === 0x7b ? 'message' : 'noise';
      }
      const newline = chunk.indexOf(0x0a, pos);
      const end = newline === -1 ? chunk.length : newline;
      if (state === 'noise' && quoted.length < MAX_QUOTED) {
        quoted += chunk.toString('utf8', pos, Math.min(end, pos + MAX_QUOTED - quoted.length));
      }
      if (newline === -1) return;
      if (state === 'noise') onNoise(quoted.replace(/\r$/, ''));
      quoted = '';
      state = 'start';
      pos = newline + 1;
    }
  };
}

export function createHttpTransport(
  config: HttpServerConfig,
  kind: 'streamable-http' | 'sse',
  oauth?: TackOAuthProvider,
): Transport {
  const url = new URL(config.url);
  // Headers in requestInit reach every POST and, for SSE, the GET that opens the stream.
  const requestInit: RequestInit = { headers: config.headers };
  // With a provider the SDK runs OAuth on a 401 (discovery, registration, PKCE, refresh); the provider keeps
  // what it learns and binds its loopback listener through the wrapped fetch.
  const auth = oauth ? { authProvider: oauth, fetch: oauth.wrapFetch() } : {};
  const transport =
    kind === 'sse'
      ? new SSEClientTransport(url, { requestInit, ...auth })
      : new StreamableHTTPClientTransport(url, { requestInit, ...auth });
  oauth?.attach(transport);
  return transport;
}
