import {
  Client,
  type PriorDiscovery,
  ProtocolError,
  SdkError,
  SdkErrorCode,
  type Transport,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { DEFAULT_LIMITS } from '../config/limits.js';
import type { ServerConfig } from '../config/load.js';
import { errorMessage, TackError } from '../errors.js';
import { configuredStatus, type Launch, prepareLaunch, type SandboxStatus } from '../sandbox/launch.js';
import type { EraCache, StoredEraVerdict } from '../store/era-cache.js';
import { type Attempt, describeExit } from './attempt.js';
import type { ConnectionOptions } from './connection-options.js';
import { guardIncoming } from './depth-guard.js';
import { isOAuthFailure } from './failures.js';
import type { ServerListings } from './listings.js';
import type { TackOAuthProvider } from './oauth.js';
import type { ServerLog } from './server-log.js';
import {
  createHttpTransport,
  createStdioTransport,
  stdioEnvironment,
  type TransportKind,
} from './transport.js';

/** Logins one connect may need: the first, and one more after an authorization server migration. */
const MAX_LOGINS_PER_CONNECT = 2;
/** Refusals explained in a server's log per start. */
const MAX_EXPLAINED = 100;

/**
 * What came of opening a server: a connected client and how its era was learnt, the error to show, or nothing
 * (the attempt was over before the open was).
 */
export type OpenOutcome =
  | { status: 'connected'; client: Client; eraSource: 'cache' | 'probe' | undefined }
  | { status: 'failed'; error: TackError }
  | { status: 'over' };

/** What an opener works with: its server's entry, the host's options, and the server's own parts. */
export interface OpenerParts {
  config: ServerConfig;
  options: ConnectionOptions;
  log: ServerLog;
  oauth: TackOAuthProvider | undefined;
  /** Hears the new client's notifications, and lists what it offers within the start budget. */
  listings: ServerListings;
}

/**
 * How one server is opened: the era verdict from the cache (one process) or a probe, a second probe when a cached
 * verdict turns out stale, Streamable HTTP with a fallback to legacy SSE, the OAuth login the SDK starts, the
 * sandbox a stdio server runs in, and one start budget for all of it. The transports themselves are made in
 * transport.ts: a new kind of transport is added there.
 */
export class ConnectionOpener {
  /** The transport of the latest connect (an http entry may have fallen back to SSE). */
  kind: TransportKind;
  /** The sandbox of the latest stdio start (configured until one starts). */
  sandbox: SandboxStatus;
  readonly #parts: OpenerParts;
  /** The sandbox of the latest stdio start: what it refused explains a start that failed. */
  #launch: Launch | undefined;
  /** See #eraKey. */
  #eraKeyMemo: string | undefined;

  constructor(parts: OpenerParts) {
    const { config } = parts;
    this.#parts = parts;
    this.kind = config.transport === 'http' ? 'streamable-http' : config.transport;
    this.sandbox = configuredStatus(config.transport === 'stdio' ? config.sandbox : undefined);
  }

  /**
   * The SDK's OAuth flow stops at the redirect: the transport throws once the user has the authorization URL.
   * Finishing takes a person at a browser, so the wait runs outside the startup budget; then the start begins
   * afresh with the new tokens. A host that cannot log in fails with the provider's AUTH_REQUIRED instead.
   * Never rejects: every failure is an outcome.
   */
  async open(attempt: Attempt): Promise<OpenOutcome> {
    const { oauth, log } = this.#parts;
    oauth?.beginAttempt();
    try {
      // A login can lead to a second one: tokens from an authorization server the resource has since left
      // (SEP-2352) are refused on the next connect, which sends the user to the new one.
      for (let logins = 0; ; logins++) {
        try {
          return await this.#openWithCache(attempt);
        } catch (error) {
          if (oauth?.loginRequired) throw oauth.loginRequired;
          if (!oauth?.loginStarted || attempt.over || logins >= MAX_LOGINS_PER_CONNECT) throw error;
          await attempt.awaitLogin(oauth);
          if (attempt.over) return { status: 'over' };
          log.note('OAuth login completed; connecting with the new tokens');
        }
      }
    } catch (error) {
      return { status: 'failed', error: this.#failure(error, attempt) };
    } finally {
      await oauth?.release();
    }
  }

  /** Why a start failed, as the error the host shows (the server named, its stderr, a hint). */
  #failure(error: unknown, { exit }: Attempt): TackError {
    const { config, log } = this.#parts;
    const { name } = config;
    if (isStartupTimeout(error) || isOAuthFailure(error)) return error as TackError;
    if (isSandboxError(error))
      return new TackError(error.code, error.message, {
        subject: { server: name, file: config.source.file },
        ...(error.hint ? { hint: error.hint } : {}),
        ...(error.details.length > 0 ? { details: error.details } : {}),
        cause: error,
      });
    const spawnCode = (error as NodeJS.ErrnoException).code;
    const reason =
      spawnCode === 'ENOENT' && config.transport === 'stdio'
        ? `command not found: ${config.command}`
        : exit
          ? describeExit(exit)
          : errorMessage(error);
    const detail = exit && reason !== errorMessage(error) ? ` (${errorMessage(error)})` : '';
    const sandboxed = spawnCode === 'ENOENT' ? undefined : this.#launch?.diagnose();
    return new TackError('SERVER_START_FAILED', `server "${name}" failed to start: ${reason}${detail}`, {
      subject: { server: name, file: config.source.file },
      hint:
        spawnCode === 'ENOENT'
          ? `Check mcpServers.${name}.command and the PATH.`
          : (sandboxed ??
            (config.transport === 'stdio'
              ? `Run the server's command by hand to see its error${log.file ? `, or read ${log.file}` : ''}.`
              : `Check that the server is up and that mcpServers.${name}.url (${config.url}) is its MCP endpoint${log.file ? `; its log: ${log.file}` : ''}.`)),
      details: log.details(),
      cause: error,
    });
  }

  /** Worked out on first start, not in the constructor: a disabled entry's URL need not parse. */
  get #eraKey(): string {
    this.#eraKeyMemo ??= eraCacheKey(this.#parts.config);
    return this.#eraKeyMemo;
  }

  async #openWithCache(attempt: Attempt): Promise<OpenOutcome> {
    const { config, log } = this.#parts;
    const key = this.#eraKey;
    const cached = config.transport === 'sse' ? undefined : await this.#cache((c) => c.get(key));
    // One budget for the whole start, the re-probe below included.
    const deadline = Date.now() + config.startupTimeoutMs;
    try {
      return await this.#open(attempt, cached, deadline);
    } catch (error) {
      if (!cached || !eraMismatch(error, cached.prior.kind, attempt.exitedOnItsOwn)) throw error;
      // A stale verdict fails at the first request: probe afresh once before calling it a failure.
      await this.#cache((c) => c.delete(key));
      log.note(
        `connect with the cached ${cached.prior.kind} era failed (${errorMessage(error)}); probing again`,
      );
      attempt.exit = undefined;
      return this.#open(attempt, undefined, deadline);
    }
  }

  /** Era cache access that never fails a start: a broken store only costs the warm start. */
  async #cache<T>(use: (cache: EraCache) => Promise<T>): Promise<T | undefined> {
    const { options, log } = this.#parts;
    if (!options.eraCache) return undefined;
    try {
      return await use(options.eraCache);
    } catch (error) {
      log.note(`era cache unavailable: ${errorMessage(error)}`);
      return undefined;
    }
  }

  async #open(
    attempt: Attempt,
    cached: StoredEraVerdict | undefined,
    deadline: number,
  ): Promise<OpenOutcome> {
    const { config, log } = this.#parts;
    if (config.transport !== 'http') {
      const prior: PriorDiscovery | undefined =
        config.transport === 'sse' ? { kind: 'legacy' } : cached?.prior;
      return this.#openWith(attempt, config.transport, prior, deadline, cached !== undefined);
    }
    if (cached?.httpTransport === 'sse') {
      return this.#openWith(attempt, 'sse', { kind: 'legacy' }, deadline, true);
    }
    try {
      return await this.#openWith(attempt, 'streamable-http', cached?.prior, deadline, cached !== undefined);
    } catch (error) {
      if (isStartupTimeout(error) || isAuthFailure(error)) throw error;
      // Servers that predate Streamable HTTP answer its POST with 4xx; try the legacy SSE transport once.
      log.note(`Streamable HTTP failed (${errorMessage(error)}); trying legacy SSE`);
      try {
        return await this.#openWith(attempt, 'sse', { kind: 'legacy' }, deadline, false);
      } catch (sseError) {
        throw new TackError(
          'SERVER_START_FAILED',
          `${errorMessage(error)} (the legacy SSE fallback failed too: ${errorMessage(sseError)})`,
          { subject: { server: config.name }, cause: error },
        );
      }
    }
  }

  /** The transport of `kind` for this server: stdio (in its sandbox, when it has one) or HTTP. */
  async #transport(kind: TransportKind, attempt: Attempt): Promise<Transport> {
    const { config, options, log, oauth } = this.#parts;
    if (kind !== 'stdio') {
      if (config.transport === 'stdio') throw new Error(`no ${kind} transport for a stdio server`);
      return createHttpTransport(config, kind === 'sse' ? 'sse' : 'streamable-http', oauth);
    }
    const launch = await this.#prepareLaunch();
    const transport = createStdioTransport(launch, {
      log,
      maxMessageBytes: options.maxMessageBytes,
      onStdoutNoise: (line) => log.diagnose(`wrote non-protocol text on stdout: ${JSON.stringify(line)}`),
      onExit: (code, signal) => {
        if (attempt.over) return;
        attempt.exit = { code, signal };
        log.note(`process ${describeExit(attempt.exit)}`);
      },
    });
    // The sandbox's proxy lives as long as the process. Patched on the instance for the reason observeChild
    // gives; the SDK's era probe swaps close() while it probes and puts this one back.
    const close = transport.close.bind(transport);
    transport.close = async () => {
      try {
        await close();
      } finally {
        await launch.close();
      }
    };
    return transport;
  }

  async #openWith(
    attempt: Attempt,
    kind: TransportKind,
    prior: PriorDiscovery | undefined,
    deadline: number,
    fromCache: boolean,
  ): Promise<OpenOutcome> {
    const { config, options, log, listings } = this.#parts;
    const remaining = Math.max(1, deadline - Date.now());
    // Below the whole budget, so a silent stdio server still leaves time for the initialize fallback.
    const probeTimeoutMs = Math.max(100, Math.round(config.startupTimeoutMs * 0.6));
    const client = new Client(options.clientInfo, {
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: probeTimeoutMs } },
      capabilities: options.capabilities ?? {},
    });
    options.configureClient?.(client, config.name);
    listings.wire(client, attempt);
    const transport = await this.#transport(kind, attempt);
    guardIncoming(transport, options.jsonDepth ?? DEFAULT_LIMITS.jsonDepth, (message) => log.note(message));

    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const shut = () => Promise.all([client.close().catch(() => {}), transport.close().catch(() => {})]);
    const taken = attempt.onEnd(shut); // close() stops a start in flight through this
    const deadlineHit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        timedOut = true;
        abort.abort();
        // Closing the transport also stops the SDK's era probe before it spawns the real process.
        void shut();
        reject(this.#timeoutError());
      }, remaining);
    });
    const started = Date.now();
    const work = (async () => {
      await client.connect(transport, {
        ...(prior ? { prior } : {}),
        timeout: remaining,
        signal: abort.signal,
      });
      await listings.load(client, {
        timeout: Math.max(1, deadline - Date.now()),
        signal: abort.signal,
      });
    })();
    // Whatever the connect achieves after the deadline (a process spawned late) is closed at once.
    const late = () => {
      if (timedOut) void shut();
    };
    void work.then(late, late);
    try {
      await Promise.race([work, deadlineHit]);
    } catch (error) {
      await shut();
      throw error;
    } finally {
      clearTimeout(timer);
      taken();
    }
    if (attempt.over) {
      await client.close().catch(() => {});
      return { status: 'over' };
    }
    client.onclose = () => attempt.linkClosed();
    client.onerror = (error) => {
      if (attempt.over) return;
      attempt.transportError = error.message;
      log.note(`transport error: ${error.message}`);
    };
    this.#remember(kind, client, prior, fromCache, Date.now() - started, probeTimeoutMs);
    this.kind = kind;
    const eraSource = prior === undefined ? 'probe' : fromCache ? 'cache' : undefined;
    return { status: 'connected', client, eraSource };
  }

  /**
   * The command line a stdio start spawns: the server's own, or its sandbox's around it. A refusal the server
   * reports on stderr is explained in the log with the rule that caused it (once per path per start).
   */
  async #prepareLaunch(): Promise<Launch> {
    const { config, log } = this.#parts;
    if (config.transport !== 'stdio') throw new Error('a sandbox is for stdio servers');
    const launch = await prepareLaunch(config.sandbox, {
      command: config.command,
      args: config.args,
      env: stdioEnvironment(config).env,
      cwd: config.cwd,
      subject: `server "${config.name}"`,
      note: (message) => log.note(message),
    });
    this.#launch = launch;
    this.sandbox = launch.status;
    for (const warning of launch.warnings) log.diagnose(warning);
    if (launch.status.state === 'unenforced')
      log.diagnose(`runs without its sandbox (${launch.status.origin}): ${launch.status.reason}`);
    const explained = new Set<string>();
    log.onStderrLine(
      launch.plan
        ? (line) => {
            for (const refusal of launch.explain(line)) {
              // Bounded: a server printing endless distinct paths must not fill the log through tack.
              if (explained.has(refusal.subject) || explained.size >= MAX_EXPLAINED) continue;
              explained.add(refusal.subject);
              log.note(refusal.message);
            }
          }
        : undefined,
    );
    return launch;
  }

  /** Store the era verdict a probe produced, so the next start spawns one process instead of two. */
  #remember(
    kind: TransportKind,
    client: Client,
    prior: PriorDiscovery | undefined,
    fromCache: boolean,
    elapsedMs: number,
    probeTimeoutMs: number,
  ): void {
    const { config } = this.#parts;
    if (config.transport === 'sse') return;
    const httpTransport =
      config.transport === 'http' ? (kind === 'sse' ? 'sse' : 'streamable-http') : undefined;
    // Not awaited: the start does not wait for a cache write (a failed one is noted in the server's log).
    const put = (era: PriorDiscovery) =>
      void this.#cache((cache) =>
        cache.put(this.#eraKey, { prior: era, ...(httpTransport ? { httpTransport } : {}) }),
      );
    if (kind === 'sse') {
      put({ kind: 'legacy' }); // only an http entry falls back to SSE: httpTransport is 'sse'
      return;
    }
    if (prior !== undefined) {
      // A modern verdict that just worked is fresh again; a legacy one is not (see ERA_VERDICT_TTL_MS): only
      // its horizon ever makes tack notice an upgraded server.
      if (fromCache && prior.kind === 'modern') put(prior);
      return;
    }
    const discover = client.getDiscoverResult();
    if (discover) {
      put({ kind: 'modern', discover });
    } else if (elapsedMs < probeTimeoutMs) {
      // A legacy verdict reached through a probe timeout may only mean a slow start: do not trust it.
      put({ kind: 'legacy' });
    }
  }

  #timeoutError(): TackError {
    const { config, log } = this.#parts;
    const { name } = config;
    return new TackError(
      'SERVER_START_TIMEOUT',
      `server "${name}" did not start within ${config.startupTimeoutMs} ms`,
      {
        subject: { server: name, file: config.source.file },
        // A sandbox that refused what the start needed is the likelier cause: more time would not help.
        hint:
          this.#launch?.diagnose() ??
          `If it is just slow (a cold npx download), raise mcpServers.${name}.startupTimeoutMs.`,
        details: log.details(),
      },
    );
  }
}

/** stdio servers by their command line and directory; HTTP servers by endpoint (origin and path). */
export function eraCacheKey(config: ServerConfig): string {
  if (config.transport === 'stdio') {
    return `stdio:${JSON.stringify([config.command, ...config.args])}@${config.cwd}`;
  }
  const url = new URL(config.url);
  return `http:${url.origin}${url.pathname}`;
}

function isSandboxError(error: unknown): error is TackError {
  return (
    TackError.isInstance(error) &&
    (error.code === 'SANDBOX_UNAVAILABLE' ||
      error.code === 'SANDBOX_FAILED' ||
      error.code === 'SANDBOX_REFUSED')
  );
}

function isStartupTimeout(error: unknown): boolean {
  return TackError.isInstance(error) && error.code === 'SERVER_START_TIMEOUT';
}

/**
 * Whether a start with a cached verdict failed the way a stale verdict fails, so a fresh probe is worth its
 * cost: not a timeout, not a missing command, not a process that exited on its own. A server that became
 * legacy-only answers the modern first request with a JSON-RPC error; one that became modern-only refuses
 * `initialize` with a protocol error too.
 */
function eraMismatch(error: unknown, cachedKind: 'modern' | 'legacy', exitedOnItsOwn: boolean): boolean {
  if (isStartupTimeout(error) || (error as NodeJS.ErrnoException).code === 'ENOENT') return false;
  if (isSandboxError(error)) return false; // the platform has no sandbox: a fresh probe would not change that
  if (isAuthFailure(error)) return false; // a 401 is no era verdict: re-probing would only ask for a login twice
  if (error instanceof ProtocolError) return true;
  // A 2025 server's answer to a 2026 request has no resultType: the SDK refuses it as an invalid result.
  const eraCodes: string[] = [
    SdkErrorCode.EraNegotiationFailed,
    SdkErrorCode.InvalidResult,
    SdkErrorCode.UnsupportedResultType,
  ];
  if (error instanceof SdkError && eraCodes.includes(error.code)) return true;
  return cachedKind === 'modern' && !exitedOnItsOwn;
}

function isAuthFailure(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    code === 'CLIENT_HTTP_AUTHENTICATION' ||
    code === 'CLIENT_HTTP_FORBIDDEN' ||
    error instanceof UnauthorizedError ||
    isOAuthFailure(error)
  );
}
