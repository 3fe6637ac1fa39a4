import type { Client, ClientCapabilities } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, type RequestOptions } from '@modelcontextprotocol/server';
import { type RoundResult, TimeoutHold } from '../../mcp/connection.js';
import type { ServedRequest } from '../../mcp/sdk-internals.js';
import { GATEWAY_ROOTS, ROOTS_ANSWER_WAIT_MS, UpstreamRoots } from './roots.js';

/**
 * What a gateway call uses of the downstream request it serves: the SDK's `ServerContext`, or the one the HTTP
 * fast path builds (serving/fast-path.ts) for a request it answers without an SDK instance.
 */
export interface RequestContext {
  mcpReq: ServedRequest;
}

/**
 * Elicitation and sampling through the gateway: an upstream server asks for input in the middle of a call,
 * and the question must reach the downstream client that made the call, in whichever era each side speaks.
 *
 * - A 2026-07-28 upstream answers the call with `input_required`; the gateway gets it back for that very call
 *   (ServerConnection.callToolRound). A 2026-07-28 downstream gets it relayed as is and retries; a 2025-era
 *   downstream is asked with server-to-client requests, and the gateway retries upstream with the answers.
 * - A 2025-era upstream sends a server-to-client request on its connection, which names no call. The router
 *   gives it to the one call in flight to that server, leaving out calls whose upstream is itself waiting for
 *   its client's answer, and refuses to guess when that leaves several (even from one downstream connection:
 *   an answer must reach the request it was asked for). A 2025-era downstream is then asked directly; a
 *   2026-07-28 one gets an `input_required` answer whose request state names the call kept waiting here
 *   (`PENDING_PREFIX`).
 * - While a question waits for the client, the upstream call's timeout is held (`TimeoutHold`): the upstream
 *   is waiting for the same answer. The client has `answerTimeoutMs` (default 10 minutes) to answer.
 */

interface InputRequestMessage {
  method: string;
  params?: Record<string, unknown> | undefined;
}

/** The capabilities the gateway declares to upstream servers, so they may ask it for input. */
export const GATEWAY_CLIENT_CAPABILITIES: ClientCapabilities = {
  elicitation: { form: {}, url: {} },
  sampling: {},
  // The gateway tells an upstream when the roots it holds change hands between clients (roots.ts).
  roots: { listChanged: true },
};

/** How long a downstream client has to answer an upstream's question, unless the gateway is told otherwise. */
export const DEFAULT_ANSWER_TIMEOUT_MS = 10 * 60_000;

/** The requests an upstream may send the gateway for its client to answer, and the capability each needs. */
const CAPABILITY_OF = {
  'elicitation/create': 'elicitation',
  'sampling/createMessage': 'sampling',
  'roots/list': 'roots',
} as const satisfies Record<string, keyof ClientCapabilities>;

const FORWARDED = Object.keys(CAPABILITY_OF) as (keyof typeof CAPABILITY_OF)[];

const SEVERITY = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];

export const PENDING_PREFIX = 'tack-gateway-pending:';

/** How the upstream work of a call ended. */
export type Settled = { kind: 'done'; result: RoundResult } | { kind: 'failed'; error: unknown };

type Outcome = Settled | { kind: 'questions'; questions: Question[] };

interface Question {
  request: InputRequestMessage;
  resolve(answer: unknown): void;
  reject(error: unknown): void;
}

/** One downstream `tools/call` in flight through the gateway, across all its input rounds. */
export class GatewayCall {
  readonly era: 'modern' | 'legacy';
  /** Aborts the upstream call: the downstream cancelled, or never came back to answer. */
  readonly abort = new AbortController();
  /** Held while a question of this call waits for the client: the upstream waits for the same answer. */
  readonly timeoutHold = new TimeoutHold();
  /** Resolves when the upstream work ends, whether or not a downstream request is still waiting for it. */
  readonly ended: Promise<Settled>;
  /** The downstream request now being served; a 2026-07-28 call gets a new one each round. */
  ctx: RequestContext;
  /** The least severe log level the downstream client wants for this call; undefined: no logs. */
  logLevel: string | undefined;
  /** What the downstream client declared it can answer (a 2026-07-28 client, per request). */
  capabilities: ClientCapabilities | undefined;
  /**
   * Who the call is for, as far as upstream session state goes (roots.ts): a 2025-era client's connection or
   * session; a 2026-07-28 request is its own.
   */
  owner: object = this;
  /** An upstream's question this client could not be asked: it did not declare the capability. */
  refused: { method: string; capability: string } | undefined;
  readonly #answerTimeoutMs: number;
  #settled: Settled | undefined;
  #end: (settled: Settled) => void = () => {};
  /** Questions not yet handed to the client. */
  readonly #questions: Question[] = [];
  /** Questions not yet answered, handed out or not. */
  readonly #open = new Set<Question>();
  #wake: (() => void) | undefined;
  #unfollow: (() => void) | undefined;

  constructor(era: 'modern' | 'legacy', ctx: RequestContext, answerTimeoutMs = DEFAULT_ANSWER_TIMEOUT_MS) {
    this.era = era;
    this.ctx = ctx;
    this.#answerTimeoutMs = answerTimeoutMs;
    this.ended = new Promise((resolve) => {
      this.#end = resolve;
    });
    this.follow(ctx);
  }

  /** Starts the upstream work; its result or failure ends the call. */
  start(work: Promise<RoundResult>): void {
    work.then(
      (result) => this.#settle({ kind: 'done', result }),
      (error: unknown) => this.#settle({ kind: 'failed', error }),
    );
  }

  /** A new downstream round: progress goes to it, and its cancellation cancels the upstream call. */
  follow(ctx: RequestContext): void {
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

  /** An upstream asks for input during this call; `signal` is the upstream withdrawing the question. */
  ask(request: InputRequestMessage, signal?: AbortSignal): Promise<unknown> {
    if (this.#settled || this.abort.signal.aborted) {
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          'tack gateway: the call this question belongs to has ended',
        ),
      );
    }
    // A question the client cannot answer is refused to the upstream here, rather than sent to a client that
    // must reject it; the call's answer then names what was missing (exchange.ts). Roots are not refused: a
    // client without them has the gateway's (none).
    const needed = (CAPABILITY_OF as Record<string, keyof ClientCapabilities>)[request.method];
    if (needed && this.capabilities?.[needed] === undefined) {
      if (request.method === 'roots/list') return Promise.resolve(GATEWAY_ROOTS);
      this.refused = { method: request.method, capability: needed };
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `the client behind tack gateway does not support ${request.method}`,
        ),
      );
    }
    const release = this.timeoutHold.hold();
    if (this.era === 'legacy') {
      const answer = askLegacyClient(this.ctx, request, {
        timeout: this.#answerTimeoutMs,
        ...(signal ? { signal } : {}),
      });
      answer.then(release, release);
      return answer;
    }
    return new Promise((resolve, reject) => {
      const done = () => {
        this.#open.delete(question);
        const queued = this.#questions.indexOf(question);
        if (queued >= 0) this.#questions.splice(queued, 1);
        signal?.removeEventListener('abort', withdraw);
        release();
      };
      const question: Question = {
        request,
        resolve: (answer) => {
          done();
          resolve(answer);
        },
        reject: (error) => {
          done();
          reject(error);
        },
      };
      const withdraw = () =>
        question.reject(signal?.reason ?? new Error('the upstream withdrew its question'));
      if (signal?.aborted) return withdraw();
      signal?.addEventListener('abort', withdraw, { once: true });
      this.#open.add(question);
      this.#questions.push(question);
      this.#wake?.();
    });
  }

  /** Waits until the upstream answers, fails, or asks questions only the downstream can answer. */
  async next(): Promise<Outcome> {
    for (;;) {
      if (this.#settled) return this.#settled;
      if (this.#questions.length > 0) return { kind: 'questions', questions: this.#questions.splice(0) };
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
      this.#wake = undefined;
    }
  }

  /** The downstream never came back: cancel upstream and fail whatever is still waiting. */
  expire(reason: string): void {
    this.abort.abort(new Error(reason));
    for (const question of [...this.#open]) question.reject(new Error(reason));
  }

  /** Whether the upstream waits for this client's answer (and so is not asking anything else meanwhile). */
  get waiting(): boolean {
    return this.timeoutHold.held;
  }

  #settle(outcome: Settled): void {
    this.#settled = outcome;
    // Questions of a call that has ended can no longer matter to anyone.
    for (const question of [...this.#open])
      question.reject(new Error('the call ended before the answer came'));
    this.#end(outcome);
    this.#wake?.();
  }
}

/** Asks a 2025-era downstream client with a server-to-client request related to its tools/call. */
function askLegacyClient(
  ctx: RequestContext,
  request: InputRequestMessage,
  options: RequestOptions,
): Promise<unknown> {
  const params = request.params ?? {};
  if (request.method === 'elicitation/create') return ctx.mcpReq.elicitInput(params as never, options);
  if (request.method === 'sampling/createMessage')
    return ctx.mcpReq.requestSampling(params as never, options);
  if (request.method === 'roots/list') return ctx.mcpReq.send({ method: 'roots/list' }, options);
  return Promise.reject(
    new ProtocolError(ProtocolErrorCode.MethodNotFound, `tack gateway cannot forward ${request.method}`),
  );
}

/**
 * Routes the questions (and log messages) 2025-era upstream servers push on their connection to the call they
 * belong to. They name no call, so routing is by elimination: the one call in flight to that server, leaving
 * out calls that wait for their client's answer. Over 2026-07-28 HTTP every request is its own downstream, so
 * two concurrent calls from one client are two calls here like any others.
 */
export class InteractionRouter {
  readonly #inFlight = new Map<string, GatewayCall[]>();
  readonly #roots = new Map<string, UpstreamRoots>();
  readonly #turnWaitMs: number | undefined;

  /** `turnWaitMs`: how long a call waits for its turn on an upstream that asks for roots (roots.ts). */
  constructor(options: { turnWaitMs?: number | undefined } = {}) {
    this.#turnWaitMs = options.turnWaitMs;
  }

  /**
   * Runs `work` with `call` registered as in flight to `server`, once it is the call's turn there (an upstream
   * that asks for roots serves one client at a time: roots.ts).
   */
  async track<T>(server: string, call: GatewayCall, work: () => Promise<T>): Promise<T> {
    const roots = this.#rootsOf(server);
    await roots.enter(call);
    const calls = this.#inFlight.get(server) ?? [];
    calls.push(call);
    this.#inFlight.set(server, calls);
    try {
      return await work();
    } finally {
      const index = calls.indexOf(call);
      if (index >= 0) calls.splice(index, 1);
      roots.leave(call);
    }
  }

  /** A downstream client (`owner`) says its roots changed: upstreams holding them ask again. */
  rootsChanged(owner: object): void {
    for (const roots of this.#roots.values()) roots.changed(owner);
  }

  #rootsOf(server: string): UpstreamRoots {
    let roots = this.#roots.get(server);
    if (!roots) {
      roots = new UpstreamRoots(server, this.#turnWaitMs);
      this.#roots.set(server, roots);
    }
    return roots;
  }

  /** For HostOptions.configureClient: installs the forwarding handlers on an upstream client. */
  readonly configure = (client: Client, server: string): void => {
    this.#rootsOf(server).attach(client);
    client.setNotificationHandler('notifications/message', async (notification) => {
      const target = this.#target(server);
      if (typeof target !== 'number') target.log(notification.params);
    });
    for (const method of FORWARDED) {
      client.setRequestHandler(
        method,
        (request, ctx) => this.#route(server, { method, params: request.params }, ctx.mcpReq.signal) as never,
      );
    }
  };

  /** The call a message from `server` belongs to, or how many calls it could belong to (0, or several). */
  #target(server: string): GatewayCall | number {
    const calls = this.#inFlight.get(server) ?? [];
    const live = calls.filter((call) => !call.abort.signal.aborted);
    // A call whose upstream waits for an answer is not asking anything else; when every call waits, the
    // upstream may be asking a second question of one of them.
    const free = live.filter((call) => !call.waiting);
    const candidates = free.length > 0 ? free : live;
    return candidates.length === 1 ? candidates[0]! : candidates.length;
  }

  #route(server: string, request: InputRequestMessage, signal: AbortSignal): Promise<unknown> {
    if (request.method === 'roots/list') return this.#listRoots(server, request, signal);
    const target = this.#target(server);
    if (target === 0) {
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `tack gateway: no client call to "${server}" is waiting for ${request.method}`,
        ),
      );
    }
    if (typeof target === 'number') {
      // Guessing could show one client's question to another, or answer the wrong request: refuse instead.
      return Promise.reject(
        new ProtocolError(
          ProtocolErrorCode.InvalidRequest,
          `tack gateway: ${target} calls are in flight to "${server}" and ${request.method} does not say which it belongs to, so it cannot be routed`,
        ),
      );
    }
    return target.ask(request, signal);
  }

  /**
   * The roots of the client whose turn it is on the upstream (roots.ts); when no client's turn stands (outside a
   * call, an upstream not tried yet or that does not follow roots/list_changed, an answer that came too late or
   * not at all), the gateway's own: never another client's.
   */
  async #listRoots(server: string, request: InputRequestMessage, signal: AbortSignal): Promise<unknown> {
    const roots = this.#rootsOf(server);
    const asked = roots.ask(this.#inFlight.get(server) ?? []);
    let answer: unknown = GATEWAY_ROOTS;
    let from: GatewayCall | undefined;
    if (asked.call) {
      // A timer of its own rather than AbortSignal.timeout, whose signal Node may collect before it fires.
      const bounded = new AbortController();
      const timer = setTimeout(
        () => bounded.abort(new Error('the client did not answer roots/list in time')),
        ROOTS_ANSWER_WAIT_MS,
      );
      const withdraw = () => bounded.abort(signal.reason);
      signal.addEventListener('abort', withdraw, { once: true });
      try {
        const given = await asked.call.ask(request, bounded.signal);
        if (roots.stands(asked)) {
          answer = given;
          from = asked.call;
        }
      } catch {
        // The client could not answer in time (or went away): the upstream gets no one's roots.
      } finally {
        clearTimeout(timer);
        signal.removeEventListener('abort', withdraw);
      }
    }
    roots.answered(asked, from);
    return answer;
  }
}
