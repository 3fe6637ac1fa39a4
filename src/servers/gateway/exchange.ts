import { randomUUID } from 'node:crypto';
import {
  type InputRequest,
  type InputRequiredResult,
  isInputRequiredResult,
} from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallRound, RoundRequest, RoundResult } from '../../mcp/connection.js';
import type { McpHost } from '../../mcp/host.js';
import {
  DEFAULT_ANSWER_TIMEOUT_MS,
  type GatewayCall,
  type InteractionRouter,
  PENDING_PREFIX,
  type RequestContext,
  type Settled,
} from './interaction.js';

/** A downstream result: whatever the upstream's final answer becomes for the client. */
type Answer = Exclude<RoundResult, InputRequiredResult>;

/** One downstream request the gateway carries to an upstream server: `tools/call`, `prompts/get`, `resources/read`. */
export interface Exchange {
  server: string;
  request: RoundRequest;
  /** The downstream method and name (or URI): a client coming back with answers must ask for the same. */
  key: string;
  /** The upstream's final answer, as the client gets it (renamed, cleaned). */
  finish(result: Answer): Answer | Promise<Answer>;
  /** The upstream failed (or the client cancelled): an answer, or a thrown (rejected) JSON-RPC error. */
  fail(error: unknown, cancelled: boolean): Answer | Promise<Answer>;
}

interface Pending {
  exchange: Exchange;
  call: GatewayCall;
  timer: NodeJS.Timeout;
  questions: Array<{ resolve(answer: unknown): void; reject(error: unknown): void }>;
  /** The client came back for it: the answer is theirs to get, and `#answer` concludes it. */
  claimed: boolean;
  /** What the client gets if it comes back after the upstream ended on its own. */
  concluded?: Concluded;
}

type Concluded = { answer: Answer } | { error: unknown };

/**
 * Carries exchanges round by round until the upstream answers, asking the downstream client whatever the
 * upstream asks (interaction.ts explains the four era combinations). Holds the calls kept waiting for a
 * 2026-07-28 client's answers to a 2025-era upstream's questions.
 */
export class Exchanges {
  readonly #host: McpHost;
  readonly #router: InteractionRouter;
  readonly #answerTimeoutMs: number;
  readonly #pending = new Map<string, Pending>();

  constructor(host: McpHost, router: InteractionRouter, answerTimeoutMs = DEFAULT_ANSWER_TIMEOUT_MS) {
    this.#host = host;
    this.#router = router;
    this.#answerTimeoutMs = answerTimeoutMs;
  }

  /** Starts `exchange` for the downstream request `ctx`; resolves with what the client gets now. */
  run(exchange: Exchange, call: GatewayCall, first: CallRound): Promise<Answer | InputRequiredResult> {
    call.start(this.#router.track(exchange.server, call, () => this.#drive(exchange, call, first)));
    return this.#answer(exchange, call);
  }

  /** Whether a downstream request state names a call kept waiting here. */
  isPending(state: unknown): state is string {
    return typeof state === 'string' && state.startsWith(PENDING_PREFIX);
  }

  /**
   * Gives up a call kept waiting for answers no one will send (a run_code script cannot answer): the upstream
   * call is cancelled now instead of at the answer timeout, and audited as such.
   */
  abandon(state: unknown, reason: string): void {
    if (!this.isPending(state)) return;
    const pending = this.#pending.get(state);
    if (!pending) return;
    this.#pending.delete(state);
    clearTimeout(pending.timer);
    pending.call.expire(reason);
  }

  /** The client's answers to a waiting call's questions: hand them upstream and wait for what comes next. */
  async resume(id: string, key: string, ctx: RequestContext): Promise<Answer | InputRequiredResult> {
    const pending = this.#pending.get(id);
    if (!pending) {
      throw new ProtocolError(
        ProtocolErrorCode.InvalidParams,
        `This request state is unknown or expired (a call waits ${describeMs(this.#answerTimeoutMs)} for its input); send the request again.`,
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
    pending.claimed = true;
    if (pending.concluded) {
      // The upstream ended while the client was away (it stopped waiting, or failed): its last word stands.
      if ('answer' in pending.concluded) return pending.concluded.answer;
      throw pending.concluded.error;
    }
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
        timeoutHold: call.timeoutHold,
      });
      if (!isInputRequiredResult(result) || call.era === 'modern') return result;
      const answers: Record<string, unknown> = {};
      for (const [key, request] of Object.entries(result.inputRequests ?? {}))
        answers[key] = await call.ask(request);
      round = { inputResponses: answers, requestState: result.requestState, meta: first.meta };
    }
  }

  /** What the client gets now: the answer, a failure, or the questions it must answer first. */
  async #answer(exchange: Exchange, call: GatewayCall): Promise<Answer | InputRequiredResult> {
    const outcome = await call.next();
    call.detach();
    if (outcome.kind !== 'questions') {
      // Relayed input_required: the client's retry is a new request, answered by a new exchange.
      if (outcome.kind === 'done' && isInputRequiredResult(outcome.result)) return outcome.result;
      const concluded = await conclude(exchange, call, outcome);
      if ('answer' in concluded) return concluded.answer;
      throw concluded.error;
    }
    // A 2025-era upstream asked a 2026-07-28 client: answer input_required, keep the call waiting here.
    const id = `${PENDING_PREFIX}${randomUUID()}`;
    const timer = setTimeout(() => {
      if (this.#pending.get(id) === pending) this.#pending.delete(id);
      call.expire(`the client did not answer the input request within ${describeMs(this.#answerTimeoutMs)}`);
    }, this.#answerTimeoutMs);
    timer.unref();
    const pending: Pending = { exchange, call, timer, questions: outcome.questions, claimed: false };
    this.#pending.set(id, pending);
    // The client may never come back: a call that ends meanwhile (the upstream gave up waiting, failed, or the
    // wait expired) is concluded now, so it is audited like any other, and its answer kept for a late client.
    void call.ended.then(async (settled) => {
      if (pending.claimed) return;
      pending.concluded = await conclude(exchange, call, settled);
    });
    return {
      resultType: 'input_required',
      inputRequests: Object.fromEntries(
        outcome.questions.map((q, i) => [`q${i}`, q.request as InputRequest]),
      ),
      requestState: id,
    };
  }
}

/** The upstream's last word as the client gets it; `finish` and `fail` also write the audit log. */
async function conclude(exchange: Exchange, call: GatewayCall, settled: Settled): Promise<Concluded> {
  let concluded: Concluded;
  try {
    if (settled.kind === 'done') concluded = { answer: await exchange.finish(settled.result as Answer) };
    else concluded = { answer: await exchange.fail(settled.error, call.abort.signal.aborted) };
  } catch (error) {
    concluded = { error };
  }
  return call.refused && failed(concluded) ? refusedAnswer(exchange, call.refused) : concluded;
}

function splitKey(key: string): [string, string] {
  const space = key.indexOf(' ');
  return space < 0 ? [key, ''] : [key.slice(0, space), key.slice(space + 1)];
}

function failed(concluded: Concluded): boolean {
  return 'error' in concluded || (concluded.answer as { isError?: unknown }).isError === true;
}

/**
 * The upstream failed after asking for input this client never declared it can give: its own error (often a bare
 * "Internal error") would hide why, so the answer names the capability instead (docs/deploy.md).
 */
function refusedAnswer(exchange: Exchange, refused: { method: string; capability: string }): Concluded {
  const [method, served] = splitKey(exchange.key);
  const what = method === 'tools/call' ? `The tool ${served}` : `${method} ${served}`;
  const text = `${what} (server "${exchange.server}") asked the client for ${refused.method}, and this client did not declare the "${refused.capability}" capability: call it from a client that supports ${refused.capability}.`;
  if (exchange.request.method === 'tools/call')
    return { answer: { isError: true, content: [{ type: 'text', text }] } as Answer };
  return { error: new ProtocolError(ProtocolErrorCode.InvalidRequest, text) };
}

function describeMs(ms: number): string {
  return ms % 60_000 === 0 ? `${ms / 60_000} minute${ms === 60_000 ? '' : 's'}` : `${ms} ms`;
}
