import type { Client, ClientCapabilities } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, type ServerContext } from '@modelcontextprotocol/server';
import type { RoundResult } from '../../mcp/connection.js';

/**
 * Elicitation and sampling through the gateway: an upstream server asks for input in the middle of a call,
 * and the question must reach the downstream client that made the call, in whichever era each side speaks.
 *
 * - A 2026-07-28 upstream answers the call with `input_required`; the gateway gets it back for that very call
 *   (ServerConnection.callToolRound). A 2026-07-28 downstream gets it relayed as is and retries; a 2025-era
 *   downstream is asked with server-to-client requests, and the gateway retries upstream with the answers.
 * - A 2025-era upstream sends a server-to-client request on its connection, which names no call. The router
 *   gives it to the call in flight to that server, and refuses to guess when calls from more than one
 *   downstream connection are in flight. A 2025-era downstream is then asked directly; a 2026-07-28 one gets
 *   an `input_required` answer whose request state names the call kept waiting here (`PENDING_PREFIX`).
 */

export interface InputRequestMessage {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/** The capabilities the gateway declares to upstream servers, so they may ask it for input. */
export const GATEWAY_CLIENT_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  roots: {},
};

const FORWARDED = ['elicitation/create', 'sampling/createMessage', 'roots/list'] as const;

const CAPABILITY_OF: Record<string, keyof ClientCapabilities> = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
};

const SEVERITY = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export const PENDING_PREFIX = 'tack-gateway-pending:';

type Outcome =
  | { kind: 'done'; result: RoundResult }
  | { kind: 'failed'; error: unknown }
  | { kind: 'questions'; questions: Question[] };

interface Question {
  request: InputRequestMessage;
  resolve(answer: unknown): void;
  reject(error: unknown): void;
}

/** One downstream `tools/call` in flight through the gateway, across all its input rounds. */
export class GatewayCall {
  /** The downstream connection (stdio) or request (HTTP) it came from: legacy questions route by it. */
  readonly channel: string;
  readonly era: 'modern' | 'legacy';
  /** Aborts the upstream call: the downstream cancelled, or never came back to answer. */
  readonly abort = new AbortController();
  /** The downstream request now being served; a 2026-07-28 call gets a new one each round. */
  ctx: ServerContext;
  /** The least severe log level the downstream client wants for this call; undefined: no logs. */
  logLevel: string | undefined;
  /** What the downstream client declared it can answer (a 2026-07-28 client, per request). */
  capabilities: ClientCapabilities | undefined;
  #upstream: Promise<RoundResult> | undefined;
  #settled: Outcome | undefined;
  readonly #questions: Question[] = [];
  #wake: (() => void) | undefined;
  #unfollow: (() => void) | undefined;

  constructor(channel: string, era: 'modern' | 'legacy', ctx: ServerContext) {
    this.channel = channel;
    this.era = era;
    this.ctx = ctx;
    this.follow(ctx);
  }

  /** Starts the upstream work; its result or failure ends the call. */
  start(work: Promise<RoundResult>): void {
    this.#upstream = work;
    work.then(
      (result) => this.#settle({ kind: 'done', result }),
      (error: unknown) => this.#settle({ kind: 'failed', error }),
    );
  }

  /** A new downstream round: progress goes to it, and its cancellation cancels the upstream call. */
  follow(ctx: ServerContext): void {
    this.detach();
    this.ctx = ctx;
    const signal = ctx.mcpReq.signal;
    const onAbort = () => this.abort.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    this.#unfollow = () => signal.removeEventListener('abort', onAbort);
  }

  /**
   * The round was answered (with questions, when the call goes on): the end of that HTTP request must not
   * read as a cancellation of the call.
   */
  detach(): void {
    this.#unfollow?.();
    this.#unfollow = undefined;
  }

  /** Upstream progress, forwarded to the downstream request now being served, if it asked for progress. */
  progress(progress: { progress: number; total?: number; message?: string }): void {
    const progressToken = this.ctx.mcpReq._meta?.progressToken;
    if (progressToken === undefined) return;
    void this.ctx.mcpReq
      .notify({ method: 'notifications/progress', params: { progressToken, ...progress } })
      .catch(() => {});
  }

  /** An upstream's log message during this call, forwarded when the client's level lets it through. */
  log(params: { level: string }): void {
    if (this.logLevel === undefined || SEVERITY.indexOf(params.level) < SEVERITY.indexOf(this.logLevel))
      return;
    void this.ctx.mcpReq.notify({ method: 'notifications/message', params }).catch(() => {});
  }

  /** An upstream asks for input during this call. */
  ask(request: InputRequestMessage): Promise<unknown> {
    if (this.era === 'legacy') return askLegacyClient(this.ctx, request);
    // A question the client cannot answer is refused to the upstream here, rather than sent as an
    // input_required the client must reject.
    const needed = CAPABILITY_OF[request.method];
    if (needed && this.capabilities?.[needed] === undefined) {
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `the client behind tack gateway does not support ${request.method}`,
        ),
      );
    }
    return new Promise((resolve, reject) => {
      this.#questions.push({ request, resolve, reject });
      this.#wake?.();
    });
  }

  /** Waits until the upstream answers, fails, or asks questions only the downstream can answer. */
  async next(): Promise<Outcome> {
    for (;;) {
      if (this.#questions.length > 0) return { kind: 'questions', questions: this.#questions.splice(0) };
      if (this.#settled) return this.#settled;
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  /** The downstream never came back: cancel upstream and fail whatever is still waiting. */
  expire(reason: string): void {
    this.abort.abort(new Error(reason));
    for (const question of this.#questions.splice(0)) question.reject(new Error(reason));
  }

  get running(): boolean {
    return this.#upstream !== undefined && this.#settled === undefined;
  }

  #settle(outcome: Outcome): void {
    this.#settled = outcome;
    this.#wake?.();
  }
}

/** Asks a 2025-era downstream client with a server-to-client request related to its tools/call. */
function askLegacyClient(ctx: ServerContext, request: InputRequestMessage): Promise<unknown> {
  const params = request.params ?? {};
  if (request.method === 'elicitation/create') return ctx.mcpReq.elicitInput(params as never);
  if (request.method === 'sampling/createMessage') return ctx.mcpReq.requestSampling(params as never);
  if (request.method === 'roots/list') return ctx.mcpReq.send({ method: 'roots/list' });
  return Promise.reject(
    new ProtocolError(ProtocolErrorCode.MethodNotFound, `tack gateway cannot forward ${request.method}`),
  );
}

/** Routes the questions 2025-era upstream servers push on their connection to the call they belong to. */
export class InteractionRouter {
  readonly #inFlight = new Map<string, GatewayCall[]>();

  /** Runs `work` with `call` registered as in flight to `server`. */
  track<T>(server: string, call: GatewayCall, work: () => Promise<T>): Promise<T> {
    const calls = this.#inFlight.get(server) ?? [];
    calls.push(call);
    this.#inFlight.set(server, calls);
    return work().finally(() => {
      const index = calls.indexOf(call);
      if (index >= 0) calls.splice(index, 1);
    });
  }

  /** For HostOptions.configureClient: installs the forwarding handlers on an upstream client. */
  readonly configure = (client: Client, server: string): void => {
    client.setNotificationHandler('notifications/message', async (notification) => {
      this.#single(server)?.log(notification.params);
    });
    for (const method of FORWARDED) {
      client.setRequestHandler(
        method,
        (request) => this.#route(server, { method, params: request.params }) as never,
      );
    }
  };

  /** The call a message from `server` belongs to, when only one downstream connection has calls there. */
  #single(server: string): GatewayCall | undefined {
    const calls = this.#inFlight.get(server) ?? [];
    return new Set(calls.map((call) => call.channel)).size === 1 ? calls.at(-1) : undefined;
  }

  #route(server: string, request: InputRequestMessage): Promise<unknown> {
    const calls = this.#inFlight.get(server) ?? [];
    const channels = new Set(calls.map((call) => call.channel));
    if (calls.length === 0) {
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `tack gateway: no client call to "${server}" is waiting for ${request.method}`,
        ),
      );
    }
    if (channels.size > 1) {
      // Guessing could show one client's question to another: refuse instead.
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `tack gateway: calls from ${channels.size} clients are in flight to "${server}"; ${request.method} cannot be routed`,
        ),
      );
    }
    return calls.at(-1)!.ask(request);
  }
}
