import type {
  CallToolResult,
  Client,
  CompleteRequest,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import { DEFAULT_LIMITS } from '../config/limits.js';
import type { ServerConfig } from '../config/load.js';
import { errorMessage, TackError } from '../errors.js';
import { configuredStatus, type SandboxStatus } from '../sandbox/launch.js';
import { SecretMasker, secretValuesOf } from '../util/secrets.js';
import {
  type ConnectionOptions,
  type ConnectionStatus,
  DEFAULT_RESTART_POLICY,
  type RestartPolicy,
  type ServerStatus,
} from './connection-options.js';
import { ServerListings } from './listings.js';
import { TackOAuthProvider } from './oauth.js';
import { ConnectionOpener, describeExit, type ProcessExit } from './opener.js';
import {
  type CallRound,
  type RequestCallOptions,
  RequestRunner,
  type RoundRequest,
  type RoundResult,
  sleep,
} from './requests.js';
import { ServerLog } from './server-log.js';
import type { TransportKind } from './transport.js';

export {
  type ConnectionChange,
  type ConnectionOptions,
  type ConnectionStatus,
  DEFAULT_RESTART_POLICY,
  type RestartPolicy,
  type ServerStatus,
} from './connection-options.js';
export { eraCacheKey } from './opener.js';
export {
  type CallRound,
  type RequestCallOptions,
  type RoundRequest,
  type RoundResult,
  TimeoutHold,
} from './requests.js';

const MAX_DIAGNOSTICS = 5;

/**
 * One configured server: its lifecycle (connect, crash, restart with backoff) around one SDK client at a time.
 * The parts live apart: how a server is opened (era cache, OAuth, HTTP -> SSE fallback, sandbox) in opener.ts,
 * what it offers and how changes are heard in listings.ts, how a request maps onto the client and its timer in
 * requests.ts. Every failure ends in a state the host can show, never in an exception that escapes to the event
 * loop: a failing server must not take the host down.
 */
export class ServerConnection {
  readonly name: string;
  readonly config: ServerConfig;
  readonly log: ServerLog;

  readonly #options: ConnectionOptions;
  readonly #policy: RestartPolicy;
  readonly #jsonDepth: number;
  readonly #listings: ServerListings;
  readonly #opener: ConnectionOpener;
  readonly #requests: RequestRunner;
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
  #abortStart: (() => Promise<unknown>) | undefined;
  #transportKind: TransportKind;
  #eraSource: 'cache' | 'probe' | undefined;
  #connectMs: number | undefined;
  #exit: ProcessExit | undefined;
  #transportError: string | undefined;
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
      options.logProject,
    );
    if (!config.enabled) this.#status = 'disabled';
    this.#sandbox = configuredStatus(config.transport === 'stdio' ? config.sandbox : undefined);
    this.#oauth =
      config.enabled && config.transport !== 'stdio' && config.oauth !== false && options.oauth
        ? new TackOAuthProvider(config, options.oauth.credentials, options.oauth.options, (m) =>
            this.log.note(m),
          )
        : undefined;
    this.#listings = new ServerListings(config, this.log, {
      changed: (kind) => options.onChange?.(this, kind),
      updated: (uri) => options.onChange?.(this, 'resource-updated', uri),
      failed: (message) => this.#diagnose(message),
    });
    this.#opener = new ConnectionOpener({
      name: this.name,
      config,
      log: this.log,
      oauth: this.#oauth,
      clientInfo: options.clientInfo,
      clientOptions: { capabilities: options.capabilities ?? {} },
      eraCache: options.eraCache,
      maxMessageBytes: options.maxMessageBytes,
      jsonDepth: this.#jsonDepth,
      configureClient: (client) => options.configureClient?.(client, this.name),
      current: (generation) => generation === this.#generation,
      setAbort: (abort) => {
        this.#abortStart = abort;
      },
      abort: () => this.#abortStart,
      exited: (generation, exit) => {
        if (generation !== this.#generation) return;
        this.#exit = exit;
        this.log.note(`process ${describeExit(exit)}`);
      },
      exitedOnItsOwn: () => this.#exitedOnItsOwn(),
      forgetExit: () => {
        this.#exit = undefined;
      },
      sandbox: (status) => {
        this.#sandbox = status;
      },
      diagnose: (message) => this.#diagnose(message),
      wire: (client, generation) => this.#listings.wire(client, () => generation === this.#generation),
      load: (client, ro) => this.#listings.load(client, ro),
      closed: (generation) => this.#onClosed(generation),
      transportError: (generation, message) => {
        if (generation !== this.#generation) return;
        this.#transportError = message;
        this.log.note(`transport error: ${message}`);
      },
    });
    this.#requests = new RequestRunner({
      name: this.name,
      config,
      log: this.log,
      jsonDepth: this.#jsonDepth,
      tools: () => this.tools,
      ensureClient: (signal) => this.ensureClient(signal),
      readyClient: () => (!this.#pending && this.#status === 'connected' ? this.#client : undefined),
      generation: () => this.#generation,
      pendingLogin: () => (this.#oauth?.loginStarted ? this.#oauth : undefined),
      awaitLogin: (oauth) => this.#opener.awaitLogin(oauth),
      served: () => {
        this.#failures = 0; // a served request is the proof of health that ends a crash loop's count
      },
      linkBroke: (error, generation) => this.#markDown(error, generation),
      crashReason: () => this.#crashReason(undefined),
    });
  }

  get tools(): readonly Tool[] {
    return this.#listings.tools;
  }

  get resources(): readonly Resource[] {
    return this.#listings.resources;
  }

  get resourceTemplates(): readonly ResourceTemplate[] {
    return this.#listings.resourceTemplates;
  }

  get prompts(): readonly Prompt[] {
    return this.#listings.prompts;
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

  /** The server's state now, as `McpHost.servers()` lists it. */
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

  /** Calls a tool of this server by its own name. */
  callTool(
    tool: string,
    args: Record<string, unknown> | undefined,
    options: RequestCallOptions = {},
  ): Promise<CallToolResult> {
    return this.#requests.send(
      { method: 'tools/call', name: tool, arguments: args },
      undefined,
      options,
    ) as Promise<CallToolResult>;
  }

  /** Reads a resource of this server. */
  readResource(uri: string, options: RequestCallOptions = {}): Promise<ReadResourceResult> {
    return this.#requests.send(
      { method: 'resources/read', uri },
      undefined,
      options,
    ) as Promise<ReadResourceResult>;
  }

  /** Gets a prompt of this server, with its arguments. */
  getPrompt(
    prompt: string,
    args: Record<string, string> | undefined,
    options: RequestCallOptions = {},
  ): Promise<GetPromptResult> {
    return this.#requests.send(
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
    return this.#requests.send(request, round, options);
  }

  /**
   * Argument completion for a prompt or a resource template. A server without the completions capability
   * completes nothing (an empty list, as the spec lets a server answer), rather than failing the caller.
   */
  complete(params: CompleteRequest['params'], options: RequestCallOptions = {}): Promise<CompleteResult> {
    return this.#requests.complete(params, options);
  }

  /** Hear `resource-updated` events for `uri` (counted; see ServerListings.watch). */
  async watch(uri: string): Promise<void> {
    const generation = this.#generation;
    await this.#listings.watch(this.client, () => this.#live(generation), uri);
  }

  /** Stops watching a resource `watch` watches. */
  async unwatch(uri: string): Promise<void> {
    const generation = this.#generation;
    await this.#listings.unwatch(this.client, () => this.#live(generation), uri);
  }

  /** The connected client, reconnecting first when a crash left the server waiting for its next use. */
  async ensureClient(signal?: AbortSignal): Promise<Client> {
    if (this.#pending) await this.#pending;
    if (this.#status === 'connected' && this.#client) return this.#client;
    if (this.#status === 'disabled') throw disabledError(this.config);
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

  async #connect(): Promise<void> {
    clearTimeout(this.#retryTimer);
    const generation = ++this.#generation;
    this.#setStatus('connecting');
    this.#exit = undefined;
    this.#transportError = undefined;
    if (this.#everConnected) this.#restarts++;
    this.log.resetTail();
    this.log.note(`starting: ${describeTarget(this.config)}`);
    const started = performance.now();
    try {
      const opened = await this.#opener.open(generation);
      if (!opened || generation !== this.#generation) return;
      this.#client = opened.client;
      this.#transportKind = opened.kind;
      this.#eraSource = opened.eraSource;
      this.#connectMs = Math.round(performance.now() - started);
      this.#everConnected = true;
      this.#lastError = undefined;
      this.#retryAt = undefined;
      this.log.note(
        `connected in ${this.#connectMs} ms: ${opened.client.getProtocolEra()} era, ${opened.client.getNegotiatedProtocolVersion()}`,
      );
      this.#setStatus('connected');
      this.#listings.connected(opened.client, () => this.#live(generation));
    } catch (error) {
      if (generation !== this.#generation) return;
      this.#fail(this.#opener.failure(error, this.#exit));
    }
  }

  /** Whether the connection of `generation` is still the one in use. */
  #live(generation: number): boolean {
    return generation === this.#generation && this.#status === 'connected';
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
    const starting = this.#abortStart;
    this.#client = undefined;
    this.#abortStart = undefined;
    return Promise.all([this.#listings.close(), client?.close(), starting?.()]).then(
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

  #down(): TackError {
    return new TackError('SERVER_UNAVAILABLE', `server "${this.name}" is down`, {
      subject: { server: this.name },
      hint: 'tack restarts it on next use; its log has the details (`tack servers`).',
    });
  }
}

/** Why a call to a disabled server fails: its file says so, or project trust held it back. */
function disabledError(config: ServerConfig): TackError {
  const reason = config.disabledReason;
  return new TackError(
    'SERVER_DISABLED',
    reason
      ? `server "${config.name}" is held back: ${reason}`
      : `server "${config.name}" is disabled in the configuration`,
    {
      subject: { server: config.name, file: config.source.file },
      hint: reason
        ? `Review ${config.source.file}, then run \`tack trust\` in the project (or pass --trust-project for one run).`
        : `Remove "enabled": false from mcpServers.${config.name} to use it.`,
    },
  );
}

function describeTarget(config: ServerConfig): string {
  return config.transport === 'stdio'
    ? [config.command, ...config.args].join(' ')
    : `${config.transport} ${config.url}`;
}
