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
import { SecretMasker, secretValuesOf } from '../util/secrets.js';
import { Attempt } from './attempt.js';
import {
  type ConnectionOptions,
  type ConnectionStatus,
  DEFAULT_RESTART_POLICY,
  type ServerStatus,
} from './connection-options.js';
import { ServerListings } from './listings.js';
import { TackOAuthProvider } from './oauth.js';
import { ConnectionOpener } from './opener.js';
import { type ResolvedPackage, resolvePackage } from './package-resolve.js';
import { packageRunnerSpec } from './package-runner.js';
import {
  type CallRound,
  type RequestCallOptions,
  type RequestOutcome,
  RequestRunner,
  type RoundRequest,
  type RoundResult,
  sleep,
} from './requests.js';
import { ServerLog } from './server-log.js';
import { stdioEnvironment } from './transport.js';

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

/**
 * Where a connection stands. Each state holds what exists only in it: the attempt under way and how to stop it,
 * the client of a live link, the error and retry time of a failure. `#enter` is the one way from one to another.
 */
type State =
  | { status: 'idle' }
  | { status: 'connecting'; attempt: Attempt; done: Promise<void> }
  | { status: 'connected'; attempt: Attempt; client: Client; eraSource: 'cache' | 'probe' | undefined }
  | { status: 'failed'; error: TackError; retryAt: number; timer: NodeJS.Timeout | undefined }
  | { status: 'disabled' }
  | { status: 'closed' };

type Connected = Extract<State, { status: 'connected' }>;

/**
 * One configured server: its lifecycle (connect, crash, restart with backoff) around one SDK client at a time.
 * The parts live apart: how a server is opened (era cache, OAuth, HTTP -> SSE fallback, sandbox) in opener.ts,
 * what it offers and how changes are heard in listings.ts, how a request maps onto the client and its timer in
 * requests.ts. They answer with outcomes, and this class alone moves between states. Every failure ends in a
 * state the host can show, never in an exception that escapes to the event loop: a failing server must not take
 * the host down.
 */
export class ServerConnection {
  readonly name: string;
  readonly config: ServerConfig;
  readonly log: ServerLog;

  readonly #options: ConnectionOptions;
  readonly #listings: ServerListings;
  readonly #opener: ConnectionOpener;
  readonly #requests: RequestRunner;
  /** One per server for its lifetime: a login started by one connect attempt is finished before the next. */
  readonly #oauth: TackOAuthProvider | undefined;
  #state: State;
  /** What outlives a state: whether it ever worked, the failures in a row, the restarts, the latest error and connect time. */
  #everConnected = false;
  #failures = 0;
  #restarts = 0;
  #lastError: TackError | undefined;
  #connectMs: number | undefined;
  /** What a package runner (`npx -y pkg`) ran at the last start, read after the server came up. */
  #package: ResolvedPackage | undefined;

  constructor(config: ServerConfig, options: ConnectionOptions) {
    this.name = config.name;
    this.config = config;
    this.#options = options;
    // The log masks this server's own configured secrets (env and header values) as well as key shapes.
    this.log = new ServerLog(
      config.name,
      config.enabled ? options.logDir : undefined,
      new SecretMasker({ values: secretValuesOf(config) }),
      options.logLimits,
      options.logProject,
    );
    this.log.onDiagnostic(() => options.onChange?.(this, 'diagnostic'));
    this.#state = config.enabled ? { status: 'idle' } : { status: 'disabled' };
    this.#oauth =
      config.enabled && config.transport !== 'stdio' && config.oauth !== false && options.oauth
        ? new TackOAuthProvider(config, options.oauth.credentials, options.oauth.options, (m) =>
            this.log.note(m),
          )
        : undefined;
    this.#listings = new ServerListings(config, this.log, (change, uri) =>
      options.onChange?.(this, change, uri),
    );
    this.#opener = new ConnectionOpener({
      config,
      options,
      log: this.log,
      oauth: this.#oauth,
      listings: this.#listings,
    });
    const jsonDepth = options.jsonDepth ?? DEFAULT_LIMITS.jsonDepth;
    this.#requests = new RequestRunner(config, this.log, this.#oauth, jsonDepth);
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
    return this.#state.status;
  }

  /** The server's instructions while connected (what `snapshot().instructions` says, without the rest). */
  get instructions(): string | undefined {
    return this.client?.getInstructions();
  }

  /**
   * The package a runner command (`npx`, `uvx`, `docker run`) ran at the last start: for npx its version and
   * integrity from npm's cache; undefined for other commands, or before the first start.
   */
  get package(): ResolvedPackage | undefined {
    return this.#package;
  }

  get lastError(): TackError | undefined {
    return this.#lastError;
  }

  /**
   * Whether the catalog should keep offering this server's tools: it is up, or it worked before and is being
   * (or will be, on next use) restarted. A server that never started is left out.
   */
  get listed(): boolean {
    const { status } = this.#state;
    if (status === 'connected') return true;
    return this.#everConnected && (status === 'connecting' || status === 'failed');
  }

  /** The connected SDK client, for what tack does not wrap (completion, subscriptions, custom methods). */
  get client(): Client | undefined {
    return this.#connected()?.client;
  }

  /** Connects, or reconnects after a failure. Resolves once connected or failed; never rejects. */
  start(): Promise<void> {
    const state = this.#state;
    if (state.status === 'connecting') return state.done;
    if (state.status !== 'idle' && state.status !== 'failed') return Promise.resolve();
    if (this.#everConnected) this.#restarts++;
    this.log.resetTail();
    this.log.note(`starting: ${describeTarget(this.config)}`);
    const attempt = new Attempt();
    // The open begins once the state says connecting, so whatever it reports finds its attempt there.
    const done = Promise.resolve().then(() => this.#connect(attempt));
    void this.#enter({ status: 'connecting', attempt, done });
    return done;
  }

  /** Forget any failure count and connect again now (the user's "try again"). */
  async restart(): Promise<void> {
    const state = this.#state;
    if (state.status === 'disabled' || state.status === 'closed') return;
    // A connect in flight settles first, so it cannot outlive its restart.
    if (state.status === 'connecting') await state.done;
    this.#failures = 0;
    await this.#enter({ status: 'idle' });
    await this.start();
  }

  /** Closes the client and waits for a stdio server's process to exit (stdin closed, then SIGTERM). */
  async close(): Promise<void> {
    await Promise.all([this.#enter({ status: 'closed' }), this.#oauth?.close()]);
    await this.log.close();
  }

  /** The server's state now, as `McpHost.servers()` lists it. */
  snapshot(): ServerStatus {
    const state = this.#state;
    const client = state.status === 'connected' ? state.client : undefined;
    const error = state.status === 'failed' ? state.error : undefined;
    return {
      name: this.name,
      transport: this.#opener.kind,
      status: state.status,
      ...(state.status === 'disabled' && this.config.disabledReason
        ? { disabledReason: this.config.disabledReason }
        : {}),
      era: client?.getProtocolEra(),
      protocolVersion: client?.getNegotiatedProtocolVersion(),
      serverInfo: client?.getServerVersion(),
      instructions: client?.getInstructions(),
      eraSource: state.status === 'connected' ? state.eraSource : undefined,
      counts: {
        tools: this.tools.length,
        resources: this.resources.length,
        resourceTemplates: this.resourceTemplates.length,
        prompts: this.prompts.length,
      },
      connectMs: this.#connectMs,
      restarts: this.#restarts,
      error: error && { code: error.code, message: error.message, hint: error.hint, details: error.details },
      retryAt: state.status === 'failed' ? state.retryAt : undefined,
      diagnostics: [...this.log.diagnostics],
      logFile: this.log.file,
      sandbox: this.#opener.sandbox,
      ...(this.#package ? { package: this.#package } : {}),
    };
  }

  /** Calls a tool of this server by its own name. */
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

  /** Reads a resource of this server. */
  readResource(uri: string, options: RequestCallOptions = {}): Promise<ReadResourceResult> {
    return this.#send({ method: 'resources/read', uri }, undefined, options) as Promise<ReadResourceResult>;
  }

  /** Gets a prompt of this server, with its arguments. */
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

  /**
   * Argument completion for a prompt or a resource template. A server without the completions capability
   * completes nothing (an empty list, as the spec lets a server answer), rather than failing the caller.
   */
  async complete(
    params: CompleteRequest['params'],
    options: RequestCallOptions = {},
  ): Promise<CompleteResult> {
    const tooDeep = this.#requests.tooDeep('completion/complete', params);
    if (tooDeep) throw tooDeep;
    const link = await this.#link(options.signal);
    if (!link.client.getServerCapabilities()?.completions) return { completion: { values: [] } };
    return this.#settle(
      this.#requests.run(link, 'completion/complete', {}, options, (c, ro) => c.complete(params, ro)),
    );
  }

  /** Hear `resource-updated` events for `uri` (counted; see ServerListings.watch). */
  async watch(uri: string): Promise<void> {
    await this.#listings.watch(this.#connected(), uri);
  }

  /** Stops watching a resource `watch` watches. */
  async unwatch(uri: string): Promise<void> {
    await this.#listings.unwatch(this.#connected(), uri);
  }

  /** The connected client, reconnecting first when a crash left the server waiting for its next use. */
  async ensureClient(signal?: AbortSignal): Promise<Client> {
    return (await this.#link(signal)).client;
  }

  #send(
    request: RoundRequest,
    round: CallRound | undefined,
    options: RequestCallOptions,
  ): Promise<RoundResult> {
    const tooDeep =
      request.method !== 'resources/read' &&
      this.#requests.tooDeep(() => `${request.method} "${request.name}"`, request.arguments, round);
    if (tooDeep) return Promise.reject(tooDeep);
    const link = this.#connected() ?? this.#link(options.signal);
    return this.#settle(this.#requests.send(link, request, round, options, this.tools));
  }

  /** A request's outcome, acted on: an answer ends a crash loop's count, a broken link takes the server down. */
  async #settle<T>(outcome: Promise<RequestOutcome<T>>): Promise<T> {
    const settled = await outcome;
    if (settled.ok) {
      this.#failures = 0;
      return settled.value;
    }
    if (settled.broke) this.#linkDown(settled.broke.attempt, settled.broke.cause);
    throw settled.error;
  }

  #connected(): Connected | undefined {
    return this.#state.status === 'connected' ? this.#state : undefined;
  }

  /** The live link, reconnecting first when a crash left the server waiting for its next use. */
  async #link(signal: AbortSignal | undefined): Promise<Connected> {
    if (this.#state.status === 'connecting') await this.#state.done;
    const state = this.#state;
    if (state.status === 'connected') return state;
    if (state.status === 'disabled') throw disabledError(this.config);
    if (state.status === 'closed') {
      throw new TackError('SERVER_UNAVAILABLE', `server "${this.name}" was closed by the host`, {
        subject: { server: this.name },
      });
    }
    if (state.status === 'failed') {
      // A server that never started is not retried behind the caller's back: the startup error stands until
      // restart() (or, for HTTP, the background reconnect) succeeds. A crash is restarted on next use.
      if (!this.#everConnected) throw state.error;
      const wait = state.retryAt - Date.now();
      if (wait > 0) await sleep(wait, signal);
    }
    await this.start();
    const after = this.#state;
    if (after.status === 'connected') return after;
    throw (
      this.#lastError ??
      new TackError('SERVER_UNAVAILABLE', `server "${this.name}" is down`, {
        subject: { server: this.name },
        hint: 'tack restarts it on next use; its log has the details (`tack servers`).',
      })
    );
  }

  async #connect(attempt: Attempt): Promise<void> {
    if (attempt.over) return; // closed before it began
    const started = performance.now();
    const opened = await this.#opener.open(attempt);
    if (attempt.over || opened.status === 'over') return;
    if (opened.status === 'failed') return this.#fail(opened.error);
    const { client } = opened;
    // Read before the state says connected: the catalog built then is reviewed with what ran, not what ran last.
    // Other commands (most) go on without a turn of the event loop.
    if (this.config.transport === 'stdio' && packageRunnerSpec(this.config.command, this.config.args)) {
      const { command, args } = this.config;
      this.#package = await resolvePackage({ command, args, env: stdioEnvironment(this.config).env });
      if (attempt.over) return;
      if (this.#package?.version) this.log.note(`package: ${this.#package.package}@${this.#package.version}`);
    }
    this.#connectMs = Math.round(performance.now() - started);
    this.#everConnected = true;
    this.#lastError = undefined;
    this.log.note(
      `connected in ${this.#connectMs} ms: ${client.getProtocolEra()} era, ${client.getNegotiatedProtocolVersion()}`,
    );
    const link: Connected = { status: 'connected', attempt, client, eraSource: opened.eraSource };
    void this.#enter(link);
    void attempt.closed.then(() => this.#closed(attempt));
    this.#listings.connected(link);
  }

  /** The client's link closed while it was the one in use. */
  #closed(attempt: Attempt): void {
    if (this.#connected()?.attempt !== attempt) return;
    const why = attempt.crashReason('closed the connection');
    this.log.note(`connection closed: ${why}`);
    this.#linkDown(attempt, new Error(why));
  }

  /** The connection broke after it worked: schedule a restart (lazily for stdio, in the background for HTTP). */
  #linkDown(attempt: Attempt, error: unknown): void {
    if (this.#connected()?.attempt !== attempt) return;
    this.#fail(
      new TackError('SERVER_CRASHED', `server "${this.name}" ${attempt.crashReason(errorMessage(error))}`, {
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
    const policy = this.#options.restartPolicy ?? DEFAULT_RESTART_POLICY;
    // 2^n overflows to Infinity long before a long-lived gateway stops counting; the cap holds either way.
    const delay = Math.min(policy.initialDelayMs * 2 ** Math.min(this.#failures - 1, 30), policy.maxDelayMs);
    this.log.note(`failed (${this.#failures} in a row): ${error.message}; next try in ${delay} ms or later`);
    // HTTP servers come back on their own (a redeploy, a network blip): reconnect without waiting for a caller.
    const timer = this.config.transport === 'stdio' ? undefined : setTimeout(() => void this.start(), delay);
    timer?.unref();
    void this.#enter({ status: 'failed', error, retryAt: Date.now() + delay, timer });
  }

  /**
   * The one move from state to state. What the state left behind stops: a failure's retry timer, an attempt
   * and its client (unless the new state carries the attempt on); the returned promise settles once they have.
   * Every state but a momentary idle and the end is announced.
   */
  #enter(next: State): Promise<void> {
    const last = this.#state;
    this.#state = next;
    if (last.status === 'failed') clearTimeout(last.timer);
    const left = last.status === 'connecting' || last.status === 'connected' ? last : undefined;
    const stopped =
      left && !('attempt' in next && next.attempt === left.attempt)
        ? Promise.all([this.#listings.close(), 'client' in left && left.client.close(), left.attempt.end()])
        : undefined;
    if (next.status !== 'idle' && next.status !== 'closed') this.#options.onChange?.(this, 'status');
    return Promise.resolve(stopped).then(
      () => undefined,
      () => undefined,
    );
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
