import {
  type CallToolResult,
  Client,
  type ClientCapabilities,
  type CompleteRequest,
  type CompleteResult,
  type GetPromptResult,
  type Implementation,
  type InputRequiredResult,
  type McpSubscription,
  type PriorDiscovery,
  type Prompt,
  ProtocolError,
  type ReadResourceResult,
  type RequestOptions,
  type Resource,
  type ResourceTemplateType as ResourceTemplate,
  SdkError,
  SdkErrorCode,
  type ServerCapabilities,
  type Tool,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { DEFAULT_LIMITS } from '../config/limits.js';
import type { ServerConfig } from '../config/load.js';
import { errorMessage, TackError } from '../errors.js';
import { configuredStatus, type Launch, prepareLaunch, type SandboxStatus } from '../sandbox/launch.js';
import type { EraCache, StoredEraVerdict } from '../store/era-cache.js';
import type { OAuthCredentials } from '../store/oauth-credentials.js';
import { jsonDepth } from '../util/json-depth.js';
import { SecretMasker, secretValuesOf } from '../util/secrets.js';
import { guardIncomingDepth } from './depth-guard.js';
import { classifyFailure, isOAuthFailure, requestFailure } from './failures.js';
import { type OAuthOptions, TackOAuthProvider } from './oauth.js';
import { ServerLog, type ServerLogLimits } from './server-log.js';
import { matchesAny } from './tool-filter.js';
import {
  createHttpTransport,
  createStdioTransport,
  stdioEnvironment,
  type TransportKind,
} from './transport.js';

type ListKind = 'tools' | 'resources' | 'prompts';

export type ConnectionStatus = 'idle' | 'connecting' | 'connected' | 'failed' | 'disabled' | 'closed';

export interface RestartPolicy {
  /** Delay before the first restart after a crash; doubled per consecutive failure, up to maxDelayMs. */
  initialDelayMs: number;
  /**
   * The longest wait between restarts. tack never gives up on a server that crashed after it worked: as long as
   * callers ask for it, it is restarted on their next use, at most this often (an HTTP server is retried in
   * the background at this pace too). A server that never started stays failed until restart().
   */
  maxDelayMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 30_000,
};

export interface ConnectionOptions {
  clientInfo: Implementation;
  eraCache?: EraCache | undefined;
  logDir?: string | undefined;
  /** How large each server's log may grow; default the defaults of `limits.serverLogBytes` and `serverLogFiles`. */
  logLimits?: ServerLogLimits | undefined;
  restartPolicy?: RestartPolicy | undefined;
  maxMessageBytes?: number | undefined;
  /** The deepest JSON sent or taken in one message (limits.jsonDepth); default 64. */
  jsonDepth?: number | undefined;
  /** Capabilities to declare (elicitation, sampling, ...) when the matching handlers are registered. */
  capabilities?: ClientCapabilities | undefined;
  /** Called on every new SDK client before it connects: register request handlers here. */
  configureClient?: ((client: Client, server: string) => void) | undefined;
  /** OAuth for remote servers that ask for it; without it a 401 is just a failed start. */
  oauth?: { options: OAuthOptions; credentials: () => OAuthCredentials } | undefined;
  /** Called whenever state or a listing changes; `resource-updated` comes with the resource's URI. */
  onChange?: ((connection: ServerConnection, change: ConnectionChange, uri?: string) => void) | undefined;
}

export type ConnectionChange =
  | 'status'
  | 'tools'
  | 'resources'
  | 'prompts'
  | 'diagnostic'
  | 'resource-updated';

export interface RequestCallOptions {
  signal?: AbortSignal | undefined;
  /** Overrides the server's callTimeoutMs; the timer restarts at every progress notification. */
  timeoutMs?: number | undefined;
  onProgress?: ((progress: { progress: number; total?: number; message?: string }) => void) | undefined;
  /**
   * Stops the timeout while held: a gateway waiting for its own client to answer the server's question must
   * not time out the server, which is waiting too. Released, the timer starts afresh.
   */
  timeoutHold?: TimeoutHold | undefined;
}

/** See RequestCallOptions.timeoutHold. Holds nest: the timer runs again when the last one is released. */
export class TimeoutHold {
  #holds = 0;
  readonly #listeners = new Set<() => void>();

  get held(): boolean {
    return this.#holds > 0;
  }

  /** Holds the timer until the returned function is called (calling it again does nothing). */
  hold(): () => void {
    if (++this.#holds === 1) this.#changed();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      if (--this.#holds === 0) this.#changed();
    };
  }

  onChange(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}

/** The longest delay setTimeout takes; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The requests that may ask for input on 2026-07-28, and so can be run round by round (requestRound). */
export type RoundRequest =
  | { method: 'tools/call'; name: string; arguments?: Record<string, unknown> | undefined }
  | { method: 'prompts/get'; name: string; arguments?: Record<string, string> | undefined }
  | { method: 'resources/read'; uri: string };

export type RoundResult = CallToolResult | GetPromptResult | ReadResourceResult | InputRequiredResult;

/** What one round of a request carries besides its own parameters (see requestRound). */
export interface CallRound {
  /** Answers to the previous round's input requests, keyed as the server asked. */
  inputResponses?: Record<string, unknown> | undefined;
  requestState?: string | undefined;
  /** Request `_meta` keys, e.g. a log level for a 2026-07-28 server (it sends logs only when asked per request). */
  meta?: Record<string, unknown> | undefined;
}

/** Everything `tack servers` shows about one server. */
export interface ServerStatus {
  name: string;
  transport: TransportKind;
  status: ConnectionStatus;
  /** Why tack switched a `disabled` server off (e.g. its project is not trusted); absent when its file did. */
  disabledReason?: string;
  era: 'modern' | 'legacy' | undefined;
  protocolVersion: string | undefined;
  serverInfo: Implementation | undefined;
  instructions: string | undefined;
  /** Whether the era came from tack's cache (one process) or a fresh probe. */
  eraSource: 'cache' | 'probe' | undefined;
  counts: { tools: number; resources: number; resourceTemplates: number; prompts: number };
  connectMs: number | undefined;
  restarts: number;
  error: { code: string; message: string; hint: string | undefined; details: readonly string[] } | undefined;
  /** When tack will try again on its own or on next use; absent when it gave up or is not waiting. */
  retryAt: number | undefined;
  diagnostics: readonly string[];
  logFile: string | undefined;
  /** The sandbox it runs in: none, configured (not started yet), enforced (with its guarantees) or unenforced. */
  sandbox: SandboxStatus;
}

const MAX_DIAGNOSTICS = 5;
/** Logins one connect may need: the first, and one more after an authorization server migration. */
const MAX_LOGINS_PER_CONNECT = 2;
/** Refusals explained in a server's log per start. */
const MAX_EXPLAINED = 100;

/**
 * One configured server: its SDK client, its lifecycle (connect, crash, restart with backoff) and its
 * listings. Every failure ends in a state the host can show, never in an exception that escapes to the
 * event loop: a failing server must not take the host down.
 */
export class ServerConnection {
  readonly name: string;
  readonly config: ServerConfig;
  readonly log: ServerLog;
  tools: Tool[] = [];
  resources: Resource[] = [];
  resourceTemplates: ResourceTemplate[] = [];
  prompts: Prompt[] = [];

  readonly #options: ConnectionOptions;
  readonly #policy: RestartPolicy;
  readonly #jsonDepth: number;
  readonly #diagnostics: string[] = [];
  #status: ConnectionStatus = 'idle';
  #client: Client | undefined;
  #generation = 0;
  #pending: Promise<void> | undefined;
  #everConnected = false;
  #failures = 0;
  #restarts = 0;
  #lastError: TackError | undefined;
  #retryAt: number | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #subscription: McpSubscription | undefined;
  #abortStart: (() => Promise<unknown>) | undefined;
  #transportKind: TransportKind;
  #eraSource: 'cache' | 'probe' | undefined;
  /** See #eraKey. */
  #eraKeyMemo: string | undefined;
  #connectMs: number | undefined;
  #exit: ProcessExit | undefined;
  #transportError: string | undefined;
  readonly #refreshing = new Map<ListKind, { again: boolean }>();
  /** Resource URIs someone asked to hear about, with how many asked; kept across reconnects. */
  readonly #watched = new Map<string, number>();
  /** One per server for its lifetime: a login started by one connect attempt is finished before the next. */
  readonly #oauth: TackOAuthProvider | undefined;
  #sandbox: SandboxStatus;

  constructor(config: ServerConfig, options: ConnectionOptions) {
    this.name = config.name;
    this.config = config;
    this.#options = options;
    this.#policy = options.restartPolicy ?? DEFAULT_RESTART_POLICY;
    this.#jsonDepth = options.jsonDepth ?? DEFAULT_LIMITS.jsonDepth;
    this.#transportKind = config.transport === 'http' ? 'streamable-http' : config.transport;
    // The log masks this server's own configured secrets (env and header values) as well as key shapes.
    this.log = new ServerLog(
      config.name,
      config.enabled ? options.logDir : undefined,
      new SecretMasker({ values: secretValuesOf(config) }),
      options.logLimits,
    );
    if (!config.enabled) this.#status = 'disabled';
    this.#sandbox = configuredStatus(config.transport === 'stdio' ? config.sandbox : undefined);
    this.#oauth =
      config.enabled && config.transport !== 'stdio' && config.oauth !== false && options.oauth
        ? new TackOAuthProvider(config, options.oauth.credentials, options.oauth.options, (m) =>
            this.log.note(m),
          )
        : undefined;
  }

  get status(): ConnectionStatus {
    return this.#status;
  }

  /** The server's instructions while connected (what `snapshot().instructions` says, without the rest). */
  get instructions(): string | undefined {
    return this.#status === 'connected' ? this.#client?.getInstructions() : undefined;
  }

  get lastError(): TackError | undefined {
    return this.#lastError;
  }

  /**
   * Whether the catalog should keep offering this server's tools: it is up, or it worked before and is being
   * (or will be, on next use) restarted. A server that never started is left out.
   */
  get listed(): boolean {
    if (this.#status === 'connected') return true;
    if (!this.#everConnected) return false;
    return this.#status === 'connecting' || this.#status === 'failed';
  }

  /** The connected SDK client, for what tack does not wrap (completion, subscriptions, custom methods). */
  get client(): Client | undefined {
    return this.#status === 'connected' ? this.#client : undefined;
  }

  /** Connects, or reconnects after a failure. Resolves once connected or failed; never rejects. */
  start(): Promise<void> {
    if (this.#status === 'disabled' || this.#status === 'closed' || this.#status === 'connected') {
      return this.#pending ?? Promise.resolve();
    }
    this.#pending ??= this.#connect().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  /** Forget any failure count and connect again now (the user's "try again"). */
  async restart(): Promise<void> {
    if (this.#status === 'disabled' || this.#status === 'closed') return;
    if (this.#pending) await this.#pending; // let a connect in flight settle, so it cannot outlive its restart
    this.#failures = 0;
    await this.#teardown();
    this.#status = 'idle';
    await this.start();
  }

  /** Closes the client and waits for a stdio server's process to exit (stdin closed, then SIGTERM). */
  async close(): Promise<void> {
    this.#status = 'closed';
    await Promise.all([this.#teardown(), this.#oauth?.close()]);
    await this.log.close();
  }

  snapshot(): ServerStatus {
    const client = this.#client;
    const connected = this.#status === 'connected' && client !== undefined;
    const error = this.#lastError;
    return {
      name: this.name,
      transport: this.#transportKind,
      status: this.#status,
      ...(this.#status === 'disabled' && this.config.disabledReason
        ? { disabledReason: this.config.disabledReason }
        : {}),
      era: connected ? client.getProtocolEra() : undefined,
      protocolVersion: connected ? client.getNegotiatedProtocolVersion() : undefined,
      serverInfo: connected ? client.getServerVersion() : undefined,
      instructions: this.instructions,
      eraSource: connected ? this.#eraSource : undefined,
      counts: {
        tools: this.tools.length,
        resources: this.resources.length,
        resourceTemplates: this.resourceTemplates.length,
        prompts: this.prompts.length,
      },
      connectMs: this.#connectMs,
      restarts: this.#restarts,
      error:
        this.#status === 'failed' && error
          ? { code: error.code, message: error.message, hint: error.hint, details: error.details }
          : undefined,
      retryAt: this.#status === 'failed' ? this.#retryAt : undefined,
      diagnostics: [...this.#diagnostics],
      logFile: this.log.file,
      sandbox: this.#sandbox,
    };
  }

  callTool(
    tool: string,
    args: Record<string, unknown> | undefined,
    options: RequestCallOptions = {},
  ): Promise<CallToolResult> {
    return this.#send(
      { method: 'tools/call', name: tool, arguments: args },
      undefined,
      options,
    ) as Promise<CallToolResult>;
  }

  readResource(uri: string, options: RequestCallOptions = {}): Promise<ReadResourceResult> {
    return this.#send({ method: 'resources/read', uri }, undefined, options) as Promise<ReadResourceResult>;
  }

  getPrompt(
    prompt: string,
    args: Record<string, string> | undefined,
    options: RequestCallOptions = {},
  ): Promise<GetPromptResult> {
    return this.#send(
      { method: 'prompts/get', name: prompt, arguments: args },
      undefined,
      options,
    ) as Promise<GetPromptResult>;
  }

  /**
   * One round of a request that may ask for input (2026-07-28 multi-round-trip): `tools/call`, `prompts/get`
   * or `resources/read`. The server's `input_required` answer comes back to the caller instead of going to this
   * client's handlers, and the caller retries with the answers: for a gateway, which must ask its own client.
   */
  requestRound(
    request: RoundRequest,
    round: CallRound,
    options: RequestCallOptions = {},
  ): Promise<RoundResult> {
    return this.#send(request, round, options);
  }

  /** `request` as a plain call, or (given a `round`) as one round of it, see requestRound. */
  #send(
    request: RoundRequest,
    round: CallRound | undefined,
    options: RequestCallOptions,
  ): Promise<RoundResult> {
    const tooDeep =
      request.method !== 'resources/read' &&
      this.#depthError(`${request.method} "${request.name}"`, request.arguments, round);
    if (tooDeep) return Promise.reject(tooDeep);
    const extra = {
      ...(round?.inputResponses ? { inputResponses: round.inputResponses } : {}),
      ...(round?.requestState !== undefined ? { requestState: round.requestState } : {}),
      ...(round?.meta ? { _meta: round.meta } : {}),
    };
    const manual = round ? { allowInputRequired: true } : {};
    if (request.method === 'tools/call') {
      const definition = round && this.tools.find((t) => t.name === request.name);
      return this.#request(`tools/call "${request.name}"`, { tool: request.name }, options, (client, ro) =>
        client.callTool(
          { name: request.name, arguments: request.arguments ?? {}, ...extra },
          {
            ...ro,
            ...manual,
            // The SDK would check an input_required answer against the output schema and refuse it; the
            // caller passes results through and the final one is checked by whoever receives it.
            ...(definition ? { toolDefinition: { ...definition, outputSchema: undefined } } : {}),
          },
        ),
      );
    }
    if (request.method === 'prompts/get') {
      return this.#request(`prompts/get "${request.name}"`, {}, options, (client, ro) =>
        client.getPrompt(
          { name: request.name, ...(request.arguments ? { arguments: request.arguments } : {}), ...extra },
          { ...ro, ...manual },
        ),
      );
    }
    return this.#request(`resources/read "${request.uri}"`, { uri: request.uri }, options, (client, ro) =>
      client.readResource({ uri: request.uri, ...extra }, { ...ro, ...manual, cacheMode: 'bypass' }),
    );
  }

  /**
   * Argument completion for a prompt or a resource template. A server without the completions capability
   * completes nothing (an empty list, as the spec lets a server answer), rather than failing the caller.
   */
  async complete(
    params: CompleteRequest['params'],
    options: RequestCallOptions = {},
  ): Promise<CompleteResult> {
    const tooDeep = this.#depthError('completion/complete', params);
    if (tooDeep) throw tooDeep;
    const client = await this.ensureClient(options.signal);
    if (!client.getServerCapabilities()?.completions) return { completion: { values: [] } };
    return this.#request<CompleteResult>('completion/complete', {}, options, (c, ro) =>
      c.complete(params, ro),
    );
  }

  /**
   * Ask the server to say when `uri` changes (`resource-updated` events). Counted: the server is told once,
   * and `unwatch` stops only when every watcher has. A 2025-era server gets `resources/subscribe`; on
   * 2026-07-28 the URI joins the listen stream's filter. Kept across reconnects.
   */
  async watch(uri: string): Promise<void> {
    const count = this.#watched.get(uri) ?? 0;
    this.#watched.set(uri, count + 1);
    if (count === 0) await this.#applyWatch(uri, true);
  }

  async unwatch(uri: string): Promise<void> {
    const count = this.#watched.get(uri) ?? 0;
    if (count <= 1) this.#watched.delete(uri);
    else this.#watched.set(uri, count - 1);
    if (count === 1) await this.#applyWatch(uri, false);
  }

  async #applyWatch(uri: string, on: boolean): Promise<void> {
    const client = this.client;
    if (!client || !client.getServerCapabilities()?.resources?.subscribe) return;
    try {
      if (client.getProtocolEra() === 'modern') {
        // The listen filter is fixed per stream: open a new one with the new set, then close the old one.
        const old = this.#subscription;
        this.#listen(this.#generation);
        await old?.close();
      } else if (on) await client.subscribeResource({ uri });
      else await client.unsubscribeResource({ uri });
    } catch (error) {
      this.log.note(`${on ? 'subscribing to' : 'unsubscribing from'} ${uri} failed: ${errorMessage(error)}`);
    }
  }

  /** The connected client, reconnecting first when a crash left the server waiting for its next use. */
  async ensureClient(signal?: AbortSignal): Promise<Client> {
    if (this.#pending) await this.#pending;
    if (this.#status === 'connected' && this.#client) return this.#client;
    if (this.#status === 'disabled') {
      const reason = this.config.disabledReason;
      throw new TackError(
        'SERVER_DISABLED',
        reason
          ? `server "${this.name}" is held back: ${reason}`
          : `server "${this.name}" is disabled in the configuration`,
        {
          subject: { server: this.name, file: this.config.source.file },
          hint: reason
            ? `Review ${this.config.source.file}, then run \`tack trust\` in the project (or pass --trust-project for one run).`
            : `Remove "enabled": false from mcpServers.${this.name} to use it.`,
        },
      );
    }
    if (this.#status === 'closed') {
      throw new TackError('SERVER_UNAVAILABLE', `server "${this.name}" was closed by the host`, {
        subject: { server: this.name },
      });
    }
    if (this.#status === 'failed') {
      // A server that never started is not retried behind the caller's back: the startup error stands until
      // restart() (or, for HTTP, the background reconnect) succeeds. A crash is restarted on next use.
      if (!this.#everConnected) throw this.#lastError ?? this.#down();
      const wait = (this.#retryAt ?? 0) - Date.now();
      if (wait > 0) await sleep(wait, signal);
    }
    await (this.#pending ?? this.start());
    if (this.#status === 'connected' && this.#client) return this.#client;
    throw this.#lastError ?? this.#down();
  }

  async #request<T>(
    what: string,
    subject: { tool?: string; uri?: string },
    options: RequestCallOptions,
    run: (client: Client, requestOptions: RequestOptions) => Promise<T>,
  ): Promise<T> {
    const client = await this.ensureClient(options.signal);
    const generation = this.#generation;
    const timeoutMs = options.timeoutMs ?? this.config.callTimeoutMs;
    // The SDK's timer cannot be held, so a held request runs on tack's own timer instead.
    const timer = options.timeoutHold ? heldTimer(options.timeoutHold, timeoutMs, options.signal) : undefined;
    try {
      const onProgress = options.onProgress;
      const requestOptions: RequestOptions = {
        timeout: timer ? MAX_TIMER_MS : timeoutMs,
        resetTimeoutOnProgress: true,
        ...(timer ? { signal: timer.signal } : options.signal ? { signal: options.signal } : {}),
        ...(onProgress
          ? {
              onprogress: (progress: Parameters<typeof onProgress>[0]) => {
                timer?.restart();
                onProgress(progress);
              },
            }
          : {}),
      };
      let result: T;
      try {
        result = await run(client, requestOptions);
      } catch (error) {
        // A 403 asking for more scope (step-up) or a 401 mid-session sent the user to log in: once that login
        // is done, the request is worth one more try with the new tokens.
        const oauth = this.#oauth;
        if (!oauth?.loginStarted || generation !== this.#generation) throw error;
        await this.#awaitLogin(oauth);
        result = await run(client, requestOptions);
      }
      this.#failures = 0; // a served request is the proof of health that ends a crash loop's count
      return result;
    } catch (error) {
      if (classifyFailure(error) === 'transport' && generation === this.#generation) {
        this.#markDown(error, generation);
      }
      // The SDK reports a caller's abort as a RequestTimeout; the signal says which it really was.
      const cause = timer?.expired
        ? new SdkError(SdkErrorCode.RequestTimeout, `Request timed out after ${timeoutMs} ms`)
        : options.signal?.aborted
          ? abortError(options.signal)
          : error;
      throw requestFailure(cause, {
        server: this.name,
        what,
        ...subject,
        timeoutMs,
        stderr: () => this.log.details(),
        reason: this.#crashReason(undefined),
      });
    } finally {
      timer?.stop();
    }
  }

  async #connect(): Promise<void> {
    clearTimeout(this.#retryTimer);
    const generation = ++this.#generation;
    this.#setStatus('connecting');
    this.#exit = undefined;
    this.#transportError = undefined;
    if (this.#everConnected) this.#restarts++;
    this.log.resetTail();
    this.log.note(`starting: ${this.#describeTarget()}`);
    const started = performance.now();
    try {
      await this.#openWithLogin(generation);
      if (generation !== this.#generation) return;
      this.#connectMs = Math.round(performance.now() - started);
      this.#everConnected = true;
      this.#lastError = undefined;
      this.#retryAt = undefined;
      this.log.note(
        `connected in ${this.#connectMs} ms: ${this.#client?.getProtocolEra()} era, ${this.#client?.getNegotiatedProtocolVersion()}`,
      );
      this.#setStatus('connected');
      this.#listen(generation);
      // A 2025-era server forgets subscriptions with its session: ask again (2026-07-28: in the listen filter).
      if (this.#client?.getProtocolEra() === 'legacy')
        for (const uri of this.#watched.keys()) void this.#applyWatch(uri, true);
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#fail(this.#startupFailure(error));
    }
  }

  /**
   * The SDK's OAuth flow stops at the redirect: the transport throws once the user has the authorization URL.
   * Finishing takes a person at a browser, so the wait runs outside the startup budget; then the start begins
   * afresh with the new tokens. A host that cannot log in fails with the provider's AUTH_REQUIRED instead.
   */
  async #openWithLogin(generation: number): Promise<void> {
    const oauth = this.#oauth;
    oauth?.beginAttempt();
    try {
      // A login can lead to a second one: tokens from an authorization server the resource has since left
      // (SEP-2352) are refused on the next connect, which sends the user to the new one.
      for (let logins = 0; ; logins++) {
        try {
          await this.#openWithCache(generation);
          return;
        } catch (error) {
          if (oauth?.loginRequired) throw oauth.loginRequired;
          if (!oauth?.loginStarted || generation !== this.#generation || logins >= MAX_LOGINS_PER_CONNECT)
            throw error;
          await this.#awaitLogin(oauth);
          if (generation !== this.#generation) return;
          this.log.note('OAuth login completed; connecting with the new tokens');
        }
      }
    } finally {
      await oauth?.release();
    }
  }

  /** The login the SDK started, finished in the browser; close() during the wait stops it. */
  async #awaitLogin(oauth: TackOAuthProvider): Promise<void> {
    this.#abortStart = () => oauth.close();
    try {
      await oauth.completeLogin();
    } finally {
      this.#abortStart = undefined;
    }
  }

  /** Worked out on first start, not in the constructor: a disabled entry's URL need not parse. */
  get #eraKey(): string {
    this.#eraKeyMemo ??= eraCacheKey(this.config);
    return this.#eraKeyMemo;
  }

  async #openWithCache(generation: number): Promise<void> {
    const key = this.#eraKey;
    const cached = this.config.transport === 'sse' ? undefined : this.#cache((c) => c.get(key));
    // One budget for the whole start, the re-probe below included.
    const deadline = Date.now() + this.config.startupTimeoutMs;
    try {
      await this.#open(generation, cached, deadline);
    } catch (error) {
      if (!cached || !eraMismatch(error, cached.prior.kind, this.#exitedOnItsOwn())) throw error;
      // A stale verdict fails at the first request: probe afresh once before calling it a failure.
      this.#cache((c) => c.delete(key));
      this.log.note(
        `connect with the cached ${cached.prior.kind} era failed (${errorMessage(error)}); probing again`,
      );
      this.#exit = undefined;
      await this.#open(generation, undefined, deadline);
    }
  }

  /** Era cache access that never fails a start: a broken store only costs the warm start. */
  #cache<T>(use: (cache: EraCache) => T): T | undefined {
    const cache = this.#options.eraCache;
    if (!cache) return undefined;
    try {
      return use(cache);
    } catch (error) {
      this.log.note(`era cache unavailable: ${errorMessage(error)}`);
      return undefined;
    }
  }

  async #open(generation: number, cached: StoredEraVerdict | undefined, deadline: number): Promise<void> {
    if (this.config.transport !== 'http') {
      const prior: PriorDiscovery | undefined =
        this.config.transport === 'sse' ? { kind: 'legacy' } : cached?.prior;
      return this.#openWith(generation, this.config.transport, prior, deadline, cached !== undefined);
    }
    if (cached?.httpTransport === 'sse') {
      return this.#openWith(generation, 'sse', { kind: 'legacy' }, deadline, true);
    }
    try {
      await this.#openWith(generation, 'streamable-http', cached?.prior, deadline, cached !== undefined);
    } catch (error) {
      if (isStartupTimeout(error) || isAuthFailure(error)) throw error;
      // Servers that predate Streamable HTTP answer its POST with 4xx; try the legacy SSE transport once.
      this.log.note(`Streamable HTTP failed (${errorMessage(error)}); trying legacy SSE`);
      try {
        await this.#openWith(generation, 'sse', { kind: 'legacy' }, deadline, false);
      } catch (sseError) {
        throw new TackError(
          'SERVER_START_FAILED',
          `${errorMessage(error)} (the legacy SSE fallback failed too: ${errorMessage(sseError)})`,
          { subject: { server: this.name }, cause: error },
        );
      }
    }
  }

  async #openWith(
    generation: number,
    kind: TransportKind,
    prior: PriorDiscovery | undefined,
    deadline: number,
    fromCache: boolean,
  ): Promise<void> {
    const remaining = Math.max(1, deadline - Date.now());
    // Below the whole budget, so a silent stdio server still leaves time for the initialize fallback.
    const probeTimeoutMs = Math.max(100, Math.round(this.config.startupTimeoutMs * 0.6));
    const client = new Client(this.#options.clientInfo, {
      versionNegotiation: { mode: 'auto', probe: { timeoutMs: probeTimeoutMs } },
      capabilities: this.#options.capabilities ?? {},
    });
    this.#options.configureClient?.(client, this.name);
    this.#wireNotifications(client, generation);
    const launch = kind === 'stdio' ? await this.#prepareLaunch() : undefined;
    const transport =
      launch !== undefined
        ? createStdioTransport(launch, {
            log: this.log,
            maxMessageBytes: this.#options.maxMessageBytes,
            onStdoutNoise: (line) =>
              this.#diagnose(`wrote non-protocol text on stdout: ${JSON.stringify(line)}`),
            onExit: (code, signal) => {
              if (generation !== this.#generation) return;
              this.#exit = { code, signal };
              this.log.note(`process ${describeExit(this.#exit)}`);
            },
          })
        : this.config.transport !== 'stdio'
          ? createHttpTransport(this.config, kind === 'sse' ? 'sse' : 'streamable-http', this.#oauth)
          : undefined;
    if (!transport) throw new Error(`no ${kind} transport for a ${this.config.transport} server`);
    guardIncomingDepth(transport, this.#jsonDepth, (message) => this.log.note(message));
    if (launch) {
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
    }

    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let timedOut = false;
    const shut = () => Promise.all([client.close().catch(() => {}), transport.close().catch(() => {})]);
    this.#abortStart = shut; // close() stops a start in flight through this
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
      await this.#loadListings(client, { timeout: Math.max(1, deadline - Date.now()), signal: abort.signal });
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
      if (this.#abortStart === shut) this.#abortStart = undefined;
    }
    if (generation !== this.#generation) {
      await client.close().catch(() => {});
      return;
    }

    client.onclose = () => this.#onClosed(generation);
    client.onerror = (error) => {
      if (generation !== this.#generation) return;
      this.#transportError = error.message;
      this.log.note(`transport error: ${error.message}`);
    };
    this.#remember(kind, client, prior, fromCache, Date.now() - started, probeTimeoutMs);
    this.#transportKind = kind;
    this.#eraSource = prior === undefined ? 'probe' : fromCache ? 'cache' : undefined;
    this.#client = client;
  }

  /**
   * The command line a stdio start spawns: the server's own, or its sandbox's around it. A refusal the server
   * reports on stderr is explained in the log with the rule that caused it (once per path per start).
   */
  async #prepareLaunch(): Promise<Launch> {
    const config = this.config;
    if (config.transport !== 'stdio') throw new Error('a sandbox is for stdio servers');
    const launch = await prepareLaunch(config.sandbox, {
      command: config.command,
      args: config.args,
      env: stdioEnvironment(config).env,
      cwd: config.cwd,
      subject: `server "${this.name}"`,
      note: (message) => this.log.note(message),
    });
    this.#sandbox = launch.status;
    if (launch.status.state === 'unenforced')
      this.#diagnose(`runs without its sandbox (${launch.status.origin}): ${launch.status.reason}`);
    const explained = new Set<string>();
    this.log.onStderrLine(
      launch.plan
        ? (line) => {
            for (const refusal of launch.explain(line)) {
              // Bounded: a server printing endless distinct paths must not fill the log through tack.
              if (explained.has(refusal.subject) || explained.size >= MAX_EXPLAINED) continue;
              explained.add(refusal.subject);
              this.log.note(refusal.message);
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
    if (this.config.transport === 'sse') return;
    const httpTransport =
      this.config.transport === 'http' ? (kind === 'sse' ? 'sse' : 'streamable-http') : undefined;
    const put = (era: PriorDiscovery) =>
      this.#cache((cache) =>
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

  async #loadListings(client: Client, ro: RequestOptions): Promise<void> {
    const caps = client.getServerCapabilities() ?? {};
    const kinds = (['tools', 'resources', 'prompts'] as const).filter((kind) => caps[kind] !== undefined);
    await Promise.all(kinds.map((kind) => this.#list(client, kind, ro)));
  }

  /** Lists one kind (resources with their templates) and keeps the result; tools pass the config filters. */
  async #list(client: Client, kind: ListKind, ro: RequestOptions & { cacheMode?: 'refresh' }): Promise<void> {
    if (kind === 'tools') this.tools = this.#filterTools((await client.listTools(undefined, ro)).tools);
    if (kind === 'prompts') this.prompts = (await client.listPrompts(undefined, ro)).prompts;
    if (kind === 'resources') {
      const [resources, templates] = await Promise.all([
        client.listResources(undefined, ro),
        client.listResourceTemplates(undefined, ro).catch(ignoreMethodNotFound),
      ]);
      this.resources = resources.resources;
      this.resourceTemplates = templates?.resourceTemplates ?? [];
    }
  }

  #filterTools(tools: Tool[]): Tool[] {
    const { enabledTools, disabledTools } = this.config;
    return tools.filter(
      (tool) =>
        (enabledTools === undefined || matchesAny(tool.name, enabledTools)) &&
        (disabledTools === undefined || !matchesAny(tool.name, disabledTools)),
    );
  }

  /** list_changed arrives unsolicited on a 2025-era connection and on a listen stream on 2026-07-28. */
  #wireNotifications(client: Client, generation: number): void {
    const refresh = (kind: 'tools' | 'resources' | 'prompts') => async () => {
      if (generation === this.#generation) await this.#refresh(client, kind);
    };
    client.setNotificationHandler('notifications/tools/list_changed', refresh('tools'));
    client.setNotificationHandler('notifications/resources/list_changed', refresh('resources'));
    client.setNotificationHandler('notifications/prompts/list_changed', refresh('prompts'));
    client.setNotificationHandler('notifications/resources/updated', async (notification) => {
      if (generation === this.#generation)
        this.#options.onChange?.(this, 'resource-updated', notification.params.uri);
    });
  }

  async #refresh(client: Client, kind: ListKind): Promise<void> {
    const running = this.#refreshing.get(kind);
    if (running) {
      running.again = true; // coalesce a burst of notifications into one more listing
      return;
    }
    const state = { again: true };
    this.#refreshing.set(kind, state);
    try {
      while (state.again) {
        state.again = false;
        await this.#list(client, kind, { timeout: this.config.callTimeoutMs, cacheMode: 'refresh' });
        this.log.note(`${kind} list changed; refreshed`);
        this.#options.onChange?.(this, kind);
      }
    } catch (error) {
      this.log.note(`refreshing ${kind} after list_changed failed: ${errorMessage(error)}`);
    } finally {
      this.#refreshing.delete(kind);
    }
  }

  /**
   * On a 2026-07-28 connection nothing arrives unsolicited: open the listen stream tack's catalog needs.
   * Opens the listen stream; when it drops, listens again with backoff for as long as the connection lives,
   * and re-lists after each re-listen, since changes made while no stream was open were never announced.
   */
  #listen(generation: number, attempt = 0): void {
    const client = this.#client;
    if (client?.getProtocolEra() !== 'modern') return;
    const caps: ServerCapabilities = client.getServerCapabilities() ?? {};
    const kinds = (['tools', 'prompts', 'resources'] as const).filter(
      (kind) => caps[kind]?.listChanged === true,
    );
    const watched = caps.resources?.subscribe ? [...this.#watched.keys()] : [];
    if (kinds.length === 0 && watched.length === 0) return;
    const live = () => generation === this.#generation && this.#status === 'connected';
    const again = (next: number) => {
      const delay = Math.min(1000 * 2 ** (next - 1), 30_000);
      this.log.note(`listen stream down; listening again in ${delay} ms`);
      setTimeout(() => live() && this.#listen(generation, next), delay).unref();
    };
    client
      .listen({
        toolsListChanged: kinds.includes('tools'),
        promptsListChanged: kinds.includes('prompts'),
        resourcesListChanged: kinds.includes('resources'),
        ...(watched.length ? { resourceSubscriptions: watched } : {}),
      })
      .then(
        (subscription) => {
          if (!live()) return void subscription.close();
          this.#subscription = subscription;
          if (attempt > 0) for (const kind of kinds) void this.#refresh(client, kind);
          void subscription.closed.then((reason) => {
            if (reason === 'remote' && live()) again(1);
          });
        },
        (error: unknown) => {
          this.log.note(`subscriptions/listen failed: ${errorMessage(error)}`);
          if (live()) again(attempt + 1);
        },
      );
  }

  #onClosed(generation: number): void {
    if (generation !== this.#generation || this.#status !== 'connected') return;
    const why = this.#crashReason('closed the connection');
    this.log.note(`connection closed: ${why}`);
    this.#markDown(new Error(why), generation);
  }

  /** Whether the process ended by itself: a failing exit code or a signal tack did not send. */
  #exitedOnItsOwn(): boolean {
    const exit = this.#exit;
    return exit !== undefined && (exit.signal ? exit.signal !== 'SIGTERM' : exit.code !== 0);
  }

  /**
   * Why the link broke, in the server's terms: its own exit (a crash) comes first; a clean exit or our SIGTERM
   * after a transport error (a message over the size limit) means the transport error is the story.
   * `fallback` when neither the process nor the transport said anything.
   */
  #crashReason<T extends string | undefined>(fallback: T): string | T {
    const exit = this.#exit && describeExit(this.#exit);
    if (this.#exitedOnItsOwn()) return `${exit}${this.#transportError ? ` (${this.#transportError})` : ''}`;
    if (this.#transportError) return `was disconnected: ${this.#transportError}`;
    return exit ?? fallback;
  }

  /**
   * The refusal, before anything serializes them, of arguments (and a round's answers) nested deeper than
   * limits.jsonDepth: JSON.stringify overflows at a few thousand levels, and that failure once passed for a
   * broken link and took the server down for every caller. Counted as the message counts them: two levels of
   * envelope (the message, `params`) above the arguments.
   */
  #depthError(what: string, ...parts: unknown[]): TackError | undefined {
    const limit = this.#jsonDepth - 2;
    if (parts.every((part) => jsonDepth(part, limit) <= limit)) return undefined;
    return new TackError(
      'LIMIT_EXCEEDED',
      `${what} on server "${this.name}": the arguments are nested deeper than ${this.#jsonDepth} levels (limits.jsonDepth); nothing was sent`,
      {
        subject: { server: this.name },
        hint: 'Send flatter arguments, or raise limits.jsonDepth in tack.json if the tool really needs them.',
      },
    );
  }

  /** The connection broke after it worked: schedule a restart (lazily for stdio, in the background for HTTP). */
  #markDown(error: unknown, generation: number): void {
    if (generation !== this.#generation) return;
    const reason = this.#crashReason(errorMessage(error));
    void this.#teardown();
    this.#fail(
      new TackError('SERVER_CRASHED', `server "${this.name}" ${reason}`, {
        subject: { server: this.name },
        hint: 'tack restarts it on next use; see its log (`tack servers`) for why it stopped.',
        details: this.log.details(),
        cause: error,
      }),
    );
  }

  #fail(error: TackError): void {
    this.#failures++;
    this.#lastError = error;
    // 2^n overflows to Infinity long before a long-lived gateway stops counting; the cap holds either way.
    const delay = Math.min(
      this.#policy.initialDelayMs * 2 ** Math.min(this.#failures - 1, 30),
      this.#policy.maxDelayMs,
    );
    this.#retryAt = Date.now() + delay;
    this.log.note(`failed (${this.#failures} in a row): ${error.message}; next try in ${delay} ms or later`);
    this.#setStatus('failed');
    // HTTP servers come back on their own (a redeploy, a network blip): reconnect without waiting for a caller.
    if (this.config.transport !== 'stdio') {
      this.#retryTimer = setTimeout(() => void this.start(), delay);
      this.#retryTimer.unref();
    }
  }

  /** Drops the current client; the returned promise settles when its transport (and process) is closed. */
  #teardown(): Promise<void> {
    clearTimeout(this.#retryTimer);
    this.#generation++;
    const client = this.#client;
    const subscription = this.#subscription;
    const starting = this.#abortStart;
    this.#client = undefined;
    this.#subscription = undefined;
    this.#abortStart = undefined;
    return Promise.all([subscription?.close(), client?.close(), starting?.()]).then(
      () => undefined,
      () => undefined,
    );
  }

  #setStatus(status: ConnectionStatus): void {
    this.#status = status;
    this.#options.onChange?.(this, 'status');
  }

  #diagnose(message: string): void {
    this.log.note(message);
    if (this.#diagnostics.includes(message)) return;
    if (this.#diagnostics.length >= MAX_DIAGNOSTICS) return;
    this.#diagnostics.push(message);
    this.#options.onChange?.(this, 'diagnostic');
  }

  #describeTarget(): string {
    const c = this.config;
    return c.transport === 'stdio' ? [c.command, ...c.args].join(' ') : `${c.transport} ${c.url}`;
  }

  #timeoutError(): TackError {
    return new TackError(
      'SERVER_START_TIMEOUT',
      `server "${this.name}" did not start within ${this.config.startupTimeoutMs} ms`,
      {
        subject: { server: this.name, file: this.config.source.file },
        hint: `If it is just slow (a cold npx download), raise mcpServers.${this.name}.startupTimeoutMs.`,
        details: this.log.details(),
      },
    );
  }

  #startupFailure(error: unknown): TackError {
    if (isStartupTimeout(error)) return error as TackError;
    if (isOAuthFailure(error)) return error;
    if (isSandboxError(error))
      return new TackError(error.code, error.message, {
        subject: { server: this.name, file: this.config.source.file },
        ...(error.hint ? { hint: error.hint } : {}),
        cause: error,
      });
    const spawnCode = (error as NodeJS.ErrnoException).code;
    const reason =
      spawnCode === 'ENOENT' && this.config.transport === 'stdio'
        ? `command not found: ${this.config.command}`
        : this.#exit
          ? describeExit(this.#exit)
          : errorMessage(error);
    const detail = this.#exit && reason !== errorMessage(error) ? ` (${errorMessage(error)})` : '';
    return new TackError('SERVER_START_FAILED', `server "${this.name}" failed to start: ${reason}${detail}`, {
      subject: { server: this.name, file: this.config.source.file },
      hint:
        spawnCode === 'ENOENT'
          ? `Check mcpServers.${this.name}.command and the PATH.`
          : `Run the server's command by hand to see its error${this.log.file ? `, or read ${this.log.file}` : ''}.`,
      details: this.log.details(),
      cause: error,
    });
  }

  #down(): TackError {
    return new TackError('SERVER_UNAVAILABLE', `server "${this.name}" is down`, {
      subject: { server: this.name },
      hint: 'tack restarts it on next use; its log has the details (`tack servers`).',
    });
  }
}

/** How a stdio server's process ended. */
interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
}

function describeExit(exit: ProcessExit): string {
  return exit.signal ? `was killed by ${exit.signal}` : `exited with code ${exit.code}`;
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
    TackError.isInstance(error) && (error.code === 'SANDBOX_UNAVAILABLE' || error.code === 'SANDBOX_FAILED')
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

function ignoreMethodNotFound(error: unknown): undefined {
  if (error instanceof ProtocolError && error.code === -32601) return undefined;
  throw error;
}

function abortError(signal: AbortSignal): Error {
  const error = new Error(`aborted: ${errorMessage(signal.reason)}`);
  error.name = 'AbortError';
  return error;
}

/**
 * A request timeout that does not run while `hold` is held and restarts at every progress notification; it
 * fires by aborting `signal`, which also carries the caller's own abort.
 */
function heldTimer(hold: TimeoutHold, timeoutMs: number, caller: AbortSignal | undefined) {
  const abort = new AbortController();
  let timer: NodeJS.Timeout | undefined;
  const state = {
    signal: abort.signal,
    expired: false,
    restart(): void {
      clearTimeout(timer);
      timer = hold.held
        ? undefined
        : setTimeout(() => {
            state.expired = true;
            abort.abort(new Error(`timed out after ${timeoutMs} ms`));
          }, timeoutMs);
    },
    stop(): void {
      clearTimeout(timer);
      stopListening();
      caller?.removeEventListener('abort', onCallerAbort);
    },
  };
  const onCallerAbort = () => abort.abort(caller?.reason);
  if (caller?.aborted) onCallerAbort();
  else caller?.addEventListener('abort', onCallerAbort, { once: true });
  const stopListening = hold.onChange(() => state.restart());
  state.restart();
  return state;
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}
