import {
  type CallToolResult,
  type Client,
  type GetPromptResult,
  type InputRequiredResult,
  type ReadResourceResult,
  type RequestOptions,
  SdkError,
  SdkErrorCode,
  type Tool,
} from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/load.js';
import { errorMessage, TackError } from '../errors.js';
import { traceMeta } from '../telemetry/propagation.js';
import { errorTypeOf, inSpan } from '../telemetry/spans.js';
import { jsonDepth } from '../util/json-depth.js';
import type { Attempt, Link } from './attempt.js';
import { classifyFailure, requestFailure } from './failures.js';
import type { TackOAuthProvider } from './oauth.js';
import type { ServerLog } from './server-log.js';

/**
 * The request side of a connection: the options a caller gives, the rounds of a request that may ask for input,
 * the timer a gateway can hold, and how each request maps onto the SDK client. It is handed a link and answers
 * with an outcome; nothing here knows of a connection's lifecycle.
 */

export interface RequestCallOptions {
  signal?: AbortSignal | undefined;
  /** Overrides the server's callTimeoutMs; the timer restarts at every progress notification. */
  timeoutMs?: number | undefined;
  /** The server's progress notifications for this request. */
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

/** One request as the connection runs it: what to call it in errors, what it concerns, and the SDK call. */
export interface PlannedRequest {
  what: string;
  subject: { tool?: string; uri?: string };
  /** `meta`: `_meta` keys to add (the trace context of the request's span, when tracing). */
  run: (
    client: Client,
    requestOptions: RequestOptions,
    meta?: Record<string, string>,
  ) => Promise<RoundResult>;
}

/**
 * `request` as a plain call, or (given a `round`) as one round of it. `tools` are the server's listed tools: a
 * round of a tools/call passes its definition so the SDK does not check an input_required answer against the
 * output schema.
 */
export function planRequest(
  request: RoundRequest,
  round: CallRound | undefined,
  tools: readonly Tool[],
): PlannedRequest {
  // The common request, a plain tools/call, builds nothing it does not send (this runs once per call).
  if (request.method === 'tools/call' && !round) {
    const params = { name: request.name, arguments: request.arguments ?? {} };
    return {
      what: `tools/call "${request.name}"`,
      subject: { tool: request.name },
      run: (client, ro, meta) => client.callTool(meta ? { ...params, _meta: meta } : params, ro),
    };
  }
  const fixed = {
    ...(round?.inputResponses ? { inputResponses: round.inputResponses } : {}),
    ...(round?.requestState !== undefined ? { requestState: round.requestState } : {}),
  };
  const withMeta = (meta: Record<string, string> | undefined) => {
    const merged = round?.meta || meta ? { ...round?.meta, ...meta } : undefined;
    return merged ? { ...fixed, _meta: merged } : fixed;
  };
  const manual = round ? { allowInputRequired: true } : {};
  if (request.method === 'tools/call') {
    const definition = round && tools.find((t) => t.name === request.name);
    return {
      what: `tools/call "${request.name}"`,
      subject: { tool: request.name },
      run: (client, ro, meta) =>
        client.callTool(
          { name: request.name, arguments: request.arguments ?? {}, ...withMeta(meta) },
          {
            ...ro,
            ...manual,
            // The SDK would check an input_required answer against the output schema and refuse it; the
            // caller passes results through and the final one is checked by whoever receives it.
            ...(definition ? { toolDefinition: { ...definition, outputSchema: undefined } } : {}),
          },
        ),
    };
  }
  if (request.method === 'prompts/get') {
    return {
      what: `prompts/get "${request.name}"`,
      subject: {},
      run: (client, ro, meta) =>
        client.getPrompt(
          {
            name: request.name,
            ...(request.arguments ? { arguments: request.arguments } : {}),
            ...withMeta(meta),
          },
          { ...ro, ...manual },
        ),
    };
  }
  return {
    what: `resources/read "${request.uri}"`,
    subject: { uri: request.uri },
    run: (client, ro, meta) =>
      client.readResource({ uri: request.uri, ...withMeta(meta) }, { ...ro, ...manual, cacheMode: 'bypass' }),
  };
}

/**
 * The refusal, before anything serializes them, of arguments (and a round's answers) nested deeper than
 * limits.jsonDepth: JSON.stringify overflows at a few thousand levels, and that failure once passed for a
 * broken link and took the server down for every caller. Counted as the message counts them: two levels of
 * envelope (the message, `params`) above the arguments.
 */
export function argumentsTooDeep(
  server: string,
  depthLimit: number,
  what: string | (() => string),
  ...parts: unknown[]
): TackError | undefined {
  const limit = depthLimit - 2;
  if (parts.every((part) => jsonDepth(part, limit) <= limit)) return undefined;
  if (typeof what === 'function') what = what();
  return new TackError(
    'LIMIT_EXCEEDED',
    `${what} on server "${server}": the arguments are nested deeper than ${depthLimit} levels (limits.jsonDepth); nothing was sent`,
    {
      subject: { server },
      hint: 'Send flatter arguments, or raise limits.jsonDepth in tack.json if the tool really needs them.',
    },
  );
}

/** What came of a request: the answer, or the error for its caller and, when the link itself broke, why. */
export type RequestOutcome<T> =
  | { ok: true; value: T }
  | { ok: false; error: TackError; broke?: { attempt: Attempt; cause: unknown } };

/**
 * Runs requests on one server's links: depth-checked arguments, the caller's timeout (held while a gateway waits
 * for its client), one more try after a login the request started, and every failure sorted into the request's
 * own (REQUEST_FAILED, the link stays) or the link's (the outcome says it broke), with the server and tool named.
 */
export class RequestRunner {
  readonly #config: ServerConfig;
  readonly #log: ServerLog;
  readonly #oauth: TackOAuthProvider | undefined;
  readonly #jsonDepth: number;

  constructor(config: ServerConfig, log: ServerLog, oauth: TackOAuthProvider | undefined, jsonDepth: number) {
    this.#config = config;
    this.#log = log;
    this.#oauth = oauth;
    this.#jsonDepth = jsonDepth;
  }

  /** Arguments nested too deep, refused before anything is sent or started (see argumentsTooDeep). */
  tooDeep(what: string | (() => string), ...parts: unknown[]): TackError | undefined {
    return argumentsTooDeep(this.#config.name, this.#jsonDepth, what, ...parts);
  }

  /**
   * `request` as a plain call, or (given a `round`) as one round of it, on `link` once it is there. `tools` are the
   * server's listed tools (see planRequest).
   */
  send(
    link: Link | Promise<Link>,
    request: RoundRequest,
    round: CallRound | undefined,
    options: RequestCallOptions,
    tools: readonly Tool[],
  ): Promise<RequestOutcome<RoundResult>> {
    const planned = planRequest(request, round, tools);
    // A CLIENT span per request, after the MCP semantic conventions: under the agent's execute_tool span or the
    // gateway's SERVER span, whichever asked. The target is named; arguments and results are not recorded.
    const target = request.method === 'resources/read' ? undefined : request.name;
    return inSpan(
      target ? `${request.method} ${target}` : request.method,
      {
        kind: 'client',
        attributes: {
          'mcp.method.name': request.method,
          ...(request.method === 'tools/call'
            ? { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': target }
            : request.method === 'prompts/get'
              ? { 'gen_ai.prompt.name': target }
              : {}),
          'tack.upstream.server': this.#config.name,
          'network.transport': this.#config.transport === 'stdio' ? 'pipe' : 'tcp',
        },
      },
      async (span) => {
        // The span's context travels in the request's _meta, so a traced upstream continues this trace.
        const meta = traceMeta();
        const run: PlannedRequest['run'] = meta ? (client, ro) => planned.run(client, ro, meta) : planned.run;
        // A connected server (the common case) is used as it is: no promise, no turn of the event loop.
        const ready = 'client' in link ? link : await link;
        const outcome = await this.run(ready, planned.what, planned.subject, options, run);
        if (!outcome.ok) {
          span.fail(errorTypeOf(outcome.error));
          return outcome;
        }
        span.set({ 'mcp.protocol.version': ready.client.getNegotiatedProtocolVersion() });
        // The conventions' word for a tool that answered with isError.
        if ((outcome.value as { isError?: unknown }).isError === true) span.fail('tool_error');
        return outcome;
      },
    );
  }

  /** `call` on the link's client, with the caller's timer and signal. */
  async run<T>(
    link: Link,
    what: string,
    subject: { tool?: string; uri?: string },
    options: RequestCallOptions,
    call: (client: Client, requestOptions: RequestOptions) => Promise<T>,
  ): Promise<RequestOutcome<T>> {
    const { client, attempt } = link;
    const timeoutMs = options.timeoutMs ?? this.#config.callTimeoutMs;
    const timer = requestTimer(options, timeoutMs);
    try {
      try {
        return { ok: true, value: await call(client, timer.options) };
      } catch (error) {
        // A 403 asking for more scope (step-up) or a 401 mid-session sent the user to log in: once that login
        // is done, the request is worth one more try with the new tokens.
        const oauth = this.#oauth;
        if (!oauth?.loginStarted || attempt.over) throw error;
        await attempt.awaitLogin(oauth);
        return { ok: true, value: await call(client, timer.options) };
      }
    } catch (error) {
      // The SDK reports a caller's abort as a RequestTimeout; the signal says which it really was.
      const cause = timer.expired
        ? new SdkError(SdkErrorCode.RequestTimeout, `Request timed out after ${timeoutMs} ms`)
        : options.signal?.aborted
          ? abortError(options.signal)
          : error;
      const failure = requestFailure(cause, {
        server: this.#config.name,
        what,
        ...subject,
        timeoutMs,
        stderr: () => this.#log.details(),
        reason: attempt.crashReason(undefined),
      });
      const broke = classifyFailure(error) === 'transport';
      return { ok: false, error: failure, ...(broke ? { broke: { attempt, cause: error } } : {}) };
    } finally {
      timer.stop();
    }
  }
}

/** The longest delay setTimeout takes; a longer one fires at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** A request's timer: the SDK's own, or (while a gateway may hold it) tack's, which can stand still. */
export interface RequestTimer {
  /** What the SDK is given. */
  options: RequestOptions;
  /** Whether tack's own timer fired (the SDK reports that as the caller's abort). */
  readonly expired: boolean;
  stop(): void;
}

export function requestTimer(options: RequestCallOptions, timeoutMs: number): RequestTimer {
  // The SDK's timer cannot be held, so a held request runs on tack's own timer instead.
  const timer = options.timeoutHold ? heldTimer(options.timeoutHold, timeoutMs, options.signal) : undefined;
  const onProgress = options.onProgress;
  return {
    options: {
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
    },
    get expired() {
      return timer?.expired ?? false;
    },
    stop: () => timer?.stop(),
  };
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

export function abortError(signal: AbortSignal): Error {
  const error = new Error(`aborted: ${errorMessage(signal.reason)}`);
  error.name = 'AbortError';
  return error;
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
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
