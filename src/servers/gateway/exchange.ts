import { randomUUID } from 'node:crypto';
import type { InputRequest } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, type ServerContext } from '@modelcontextprotocol/server';
import {
  type CallRound,
  type InputRequiredRound,
  isInputRequired,
  type RoundRequest,
  type RoundResult,
} from '../../mcp/connection.js';
import type { McpHost } from '../../mcp/host.js';
import { type GatewayCall, type InteractionRouter, PENDING_PREFIX } from './interaction.js';

/** A downstream result: whatever the upstream's final answer becomes for the client. */
type Answer = Exclude<RoundResult, InputRequiredRound>;

/** One downstream request the gateway carries to an upstream server: `tools/call`, `prompts/get`, `resources/read`. */
export interface Exchange {
  server: string;
  request: RoundRequest;
  /** The downstream method and name (or URI): a client coming back with answers must ask for the same. */
  key: string;
  /** The upstream's final answer, as the client gets it (renamed, cleaned). */
  finish(result: Answer): Answer;
  /** The upstream failed (or the client cancelled): an answer, or a thrown JSON-RPC error. */
  fail(error: unknown, cancelled: boolean): Answer;
}

/** A client has this long to answer the questions of a call before the call is cancelled upstream. */
const PENDING_TTL_MS = 10 * 60_000;

interface Pending {
  exchange: Exchange;
  call: GatewayCall;
  timer: NodeJS.Timeout;
  questions: Array<{ resolve(answer: unknown): void; reject(error: unknown): void }>;
}

/**
 * Carries exchanges round by round until the upstream answers, asking the downstream client whatever the
 * upstream asks (interaction.ts explains the four era combinations). Holds the calls kept waiting for a
 * 2026-07-28 client's answers to a 2025-era upstream's questions.
 */
export class Exchanges {
  readonly #host: McpHost;
  readonly #router: InteractionRouter;
  readonly #pending = new Map<string, Pending>();

  constructor(host: McpHost, router: InteractionRouter) {
    this.#host = host;
    this.#router = router;
  }

  /** Starts `exchange` for the downstream request `ctx`; resolves with what the client gets now. */
  run(exchange: Exchange, call: GatewayCall, first: CallRound): Promise<Answer | InputRequiredRound> {
    call.start(this.#router.track(exchange.server, call, () => this.#drive(exchange, call, first)));
    return this.#answer(exchange, call);
  }

  /** Whether a downstream request state names a call kept waiting here. */
  isPending(state: unknown): state is string {
    return typeof state === 'string' && state.startsWith(PENDING_PREFIX);
  }

  /** The client's answers to a waiting call's questions: hand them upstream and wait for what comes next. */
  async resume(id: string, key: string, ctx: ServerContext): Promise<Answer | InputRequiredRound> {
    const pending = this.#pending.get(id);
    if (!pending) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'This request state is unknown or expired (a call waits 10 minutes for its input); send the request again.',
      );
    }
    if (pending.exchange.key !== key) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        'This request state belongs to another request.',
      );
    }
    this.#pending.delete(id);
    clearTimeout(pending.timer);
    pending.call.follow(ctx);
    const answers = ctx.mcpReq.inputResponses ?? {};
    pending.questions.forEach((question, i) => {
      const answer = answers[`q${i}`];
      if (answer === undefined) question.reject(new Error('the client sent no answer'));
      else question.resolve(answer);
    });
    return this.#answer(pending.exchange, pending.call);
  }

  /**
   * Upstream round after round. A 2026-07-28 upstream asking for input is relayed to a 2026-07-28 client as
   * is (it retries with the answers); a 2025-era client is asked here instead, and the gateway retries.
   */
  async #drive(exchange: Exchange, call: GatewayCall, first: CallRound): Promise<RoundResult> {
    let round = first;
    for (;;) {
      const result = await this.#host.requestRound(exchange.server, exchange.request, round, {
        signal: call.abort.signal,
        onProgress: (progress) => call.progress(progress),
      });
      if (!isInputRequired(result) || call.era === 'modern') return result;
      const answers: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(result.inputRequests ?? {}))
        answers[key] = await call.ask(request);
      round = { inputResponses: answers, requestState: result.requestState, meta: first.meta };
    }
  }

  /** What the client gets now: the answer, a failure, or the questions it must answer first. */
  async #answer(exchange: Exchange, call: GatewayCall): Promise<Answer | InputRequiredRound> {
    const outcome = await call.next();
    call.detach();
    if (outcome.kind === 'done') {
      // Relayed input_required: the client's retry is a new request, answered by a new exchange.
      return isInputRequired(outcome.result) ? outcome.result : exchange.finish(outcome.result);
    }
    if (outcome.kind === 'failed') return exchange.fail(outcome.error, call.abort.signal.aborted);
    // A 2025-era upstream asked a 2026-07-28 client: answer input_required, keep the call waiting here.
    const id = `${PENDING_PREFIX}${randomUUID()}`;
    const timer = setTimeout(() => {
      this.#pending.delete(id);
      call.expire('the client did not answer the input request in time');
    }, PENDING_TTL_MS);
    timer.unref();
    this.#pending.set(id, { exchange, call, timer, questions: outcome.questions });
    return {
      resultType: 'input_required',
      inputRequests: Object.fromEntries(
        outcome.questions.map((q, i) => [`q${i}`, q.request as InputRequest]),
      ),
      requestState: id,
    };
  }
}
