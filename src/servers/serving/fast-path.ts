import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import {
  classifyInboundRequest,
  type Implementation,
  isJsonContentType,
  ProtocolErrorCode,
  SERVER_INFO_META_KEY,
  type Server,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import type { LegacySessions } from './legacy-sessions.js';

/**
 * The HTTP fast path: the common request, a plain `tools/call`, answered without the SDK's per-request machinery
 * (a web `Request` and `Response` with their streams, a fresh server instance with its handlers for every
 * 2026-07-28 request, zod validation of a request already parsed and of a result the upstream client already
 * validated). Whatever is not plainly such a request goes to the SDK as before, so every refusal and every
 * rarer feature keeps the SDK's own answer: the predicates below only take what the SDK would accept.
 *
 * What a taken request gets is what the SDK would send: a 2026-07-28 request a JSON body (upgraded to an SSE
 * stream when a notification comes first, as the SDK's `auto` mode does), with `resultType` and the server's
 * identity stamped on the result; a 2025-era session request an SSE stream with the priming event and event ids
 * from the session's event store, so a client can resume it (test/servers/fast-path.test.ts compares both with
 * the SDK's answers).
 */

const MODERN_REVISION = '2026-07-28';
/** Comment frames on a long SSE answer, as the SDK sends them, so proxies do not drop a quiet stream. */
const KEEP_ALIVE_MS = 15_000;
/** How long a 2025-era answer's headers and priming event may wait to leave with the answer itself. */
const PRIME_DELAY_MS = 20;
/** Server-to-client requests a 2025-era downstream answers on its POST stream: such clients take the SDK path. */
const POST_STREAM_REQUESTS = ['roots'] as const;

export interface FastMessage {
  jsonrpc: '2.0';
  id: string | number;
  method: 'tools/call';
  params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> };
}

/** One request the fast path may take. */
export interface FastRequest {
  era: 'modern' | 'legacy';
  message: FastMessage;
  /** The session's instance (2025 era): what it knows of its client (capabilities, log level). */
  instance: Server | undefined;
  reply: FastReply;
}

/** How a taken request is answered; exactly one of `result` and `error`. */
export interface FastReply {
  /** Aborted when the client goes away before the answer. */
  readonly signal: AbortSignal;
  /** A notification related to the request (progress, a log message): the answer becomes an SSE stream. */
  notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void>;
  result(result: Record<string, unknown>): void;
  error(error: unknown): void;
}

export interface FastPath {
  serverInfo: Implementation;
  /**
   * Takes the request (and answers it through `request.reply`, now or later) or leaves it to the SDK: false
   * leaves the response untouched.
   */
  take(request: FastRequest): boolean;
}

/** The parsed body as a plain `tools/call` request, or undefined (then the SDK judges it). */
export function plainToolCall(body: unknown): FastMessage | undefined {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const message = body as Record<string, unknown>;
  if (message.jsonrpc !== '2.0' || message.method !== 'tools/call') return undefined;
  const id = message.id;
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isSafeInteger(id))) return undefined;
  const params = message.params as Record<string, unknown> | undefined;
  if (!isPlainObject(params) || typeof params.name !== 'string') return undefined;
  if (params.arguments !== undefined && !isPlainObject(params.arguments)) return undefined;
  // Task-augmented calls, retries with answers and anything else the SDK would look at: its path.
  for (const key of Object.keys(params))
    if (key !== 'name' && key !== 'arguments' && key !== '_meta') return undefined;
  const meta = params._meta;
  if (meta !== undefined) {
    if (!isPlainObject(meta)) return undefined;
    const token = meta.progressToken;
    if (token !== undefined && typeof token !== 'string' && typeof token !== 'number') return undefined;
  }
  return message as unknown as FastMessage;
}

/** The request id a `notifications/cancelled` body names, if it is one. */
export function cancelledRequest(body: unknown): string | number | undefined {
  if (!isPlainObject(body) || body.method !== 'notifications/cancelled' || !isPlainObject(body.params))
    return undefined;
  const id = body.params.requestId;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? undefined : value;
}

/** What the SDK's transports require of every POST: both media types accepted, a JSON body. */
function plainPost(headers: IncomingHttpHeaders): boolean {
  const accept = header(headers, 'accept');
  return (
    accept?.includes('application/json') === true &&
    accept.includes('text/event-stream') &&
    isJsonContentType(header(headers, 'content-type') ?? null)
  );
}

/**
 * Offers a parsed POST body to the fast path. True: the request is taken and `res` is (or will be) answered;
 * false: nothing was written and the SDK serves it.
 */
export function offerFastPath(
  fast: FastPath,
  headers: IncomingHttpHeaders,
  body: unknown,
  res: ServerResponse,
  sessions: LegacySessions,
): boolean {
  const message = plainToolCall(body);
  if (!message) {
    // A 2025-era client cancels with a notification on its session: a call the fast path serves is cancelled
    // here; the SDK answers the notification itself (202) and ignores the id, which it never saw.
    const cancelled = cancelledRequest(body);
    if (cancelled !== undefined) sessions.fastSession(header(headers, 'mcp-session-id'))?.cancel(cancelled);
    return false;
  }
  if (!plainPost(headers)) return false;
  const protocolVersion = header(headers, 'mcp-protocol-version');
  const route = classifyInboundRequest({
    httpMethod: 'POST',
    protocolVersionHeader: protocolVersion,
    mcpMethodHeader: header(headers, 'mcp-method'),
    mcpNameHeader: header(headers, 'mcp-name'),
    body,
  });
  if (route.kind === 'modern') {
    // The SDK's later checks, taken only when they plainly pass: the revision it serves, the standard headers
    // naming exactly this method and tool (no Base64 form), the envelope that says who the client is.
    if (route.classification.revision !== MODERN_REVISION || protocolVersion !== MODERN_REVISION)
      return false;
    if (header(headers, 'mcp-method') !== 'tools/call' || header(headers, 'mcp-name') !== message.params.name)
      return false;
    const reply = new ModernReply(res, message.id, fast.serverInfo);
    return commit(fast.take({ era: 'modern', message, instance: undefined, reply }), reply);
  }
  if (route.kind !== 'legacy' || header(headers, 'mcp-method') !== undefined) return false;
  if (protocolVersion === undefined || !SUPPORTED_PROTOCOL_VERSIONS.includes(protocolVersion)) return false;
  if (protocolVersion >= MODERN_REVISION) return false;
  const session = sessions.fastSession(header(headers, 'mcp-session-id'));
  if (!session) return false;
  const capabilities = session.instance.getClientCapabilities();
  if (!capabilities || POST_STREAM_REQUESTS.some((c) => capabilities[c] !== undefined)) return false;
  const reply = new LegacyReply(res, message.id, session, protocolVersion);
  return commit(fast.take({ era: 'legacy', message, instance: session.instance, reply }), reply);
}

/**
 * A 2026-07-28 result as the SDK encodes it: `resultType` ("complete" unless the result says otherwise) and the
 * server's identity in `_meta` (unless the result names one).
 */
export function stampModernResult(
  result: Record<string, unknown>,
  serverInfo: Implementation,
): Record<string, unknown> {
  const stamped = result.resultType === undefined ? { ...result, resultType: 'complete' } : result;
  const meta = stamped._meta;
  if (meta === undefined) return { ...stamped, _meta: { [SERVER_INFO_META_KEY]: serverInfo } };
  if (!isPlainObject(meta) || meta[SERVER_INFO_META_KEY] !== undefined) return stamped;
  return { ...stamped, _meta: { ...meta, [SERVER_INFO_META_KEY]: serverInfo } };
}

/** A thrown error as the SDK's protocol layer answers it: its integer code (else -32603), message and data. */
export function errorResponse(id: string | number, error: unknown): Record<string, unknown> {
  const thrown = (error ?? {}) as { code?: unknown; message?: unknown; data?: unknown };
  const code = Number.isSafeInteger(thrown.code) ? (thrown.code as number) : ProtocolErrorCode.InternalError;
  return {
    jsonrpc: '2.0',
    id,
    error: {
      // -32002 (resource not found, 2025) is sent as -32602 in both eras, as the SDK's codecs do.
      code: code === -32002 ? -32602 : code,
      message: typeof thrown.message === 'string' ? thrown.message : 'Internal error',
      ...(thrown.data !== undefined ? { data: thrown.data } : {}),
    },
  };
}

/**
 * A message as JSON; a result that cannot be written (a value JSON has no form for) becomes the internal error
 * the SDK would send, rather than an exception on the call's promise.
 */
export function serialize(message: Record<string, unknown>, id: string | number): string {
  try {
    return JSON.stringify(message);
  } catch (error) {
    return JSON.stringify(errorResponse(id, new Error(`the answer cannot be written: ${String(error)}`)));
  }
}

function commit(taken: boolean, reply: Reply): boolean {
  if (taken) reply.open();
  return taken;
}

/** Ends a reply's wait for its client: the client went away, or the answer was written. */
abstract class Reply implements FastReply {
  readonly #abort = new AbortController();
  readonly signal = this.#abort.signal;
  protected readonly res: ServerResponse;
  protected readonly id: string | number;
  protected done = false;
  protected cancelled = false;
  readonly #onClose = () => {
    if (!this.done) this.#abort.abort(new Error('the client closed the request'));
  };

  constructor(res: ServerResponse, id: string | number) {
    this.res = res;
    this.id = id;
  }

  /** The request is taken: from here on the client going away cancels it. Nothing is written before. */
  open(): void {
    this.res.once('close', this.#onClose);
  }

  protected abandon(): void {
    this.res.off('close', this.#onClose);
  }

  /**
   * The client cancelled the request (a 2025-era `notifications/cancelled`): as the SDK does, no response is
   * sent for it, and its stream ends when the call has wound down.
   */
  cancel(reason: unknown): void {
    if (this.done) return;
    this.cancelled = true;
    this.#abort.abort(reason);
  }

  abstract notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void>;
  abstract result(result: Record<string, unknown>): void;

  error(error: unknown): void {
    this.answer(errorResponse(this.id, error));
  }

  protected abstract answer(message: Record<string, unknown>): void;
}

const SSE_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/** Keep-alive comments for SSE answers that run long, from one shared timer. */
const streams = new Set<{ res: ServerResponse; since: number }>();
let keepAlive: NodeJS.Timeout | undefined;

function watchStream(res: ServerResponse): () => void {
  const entry = { res, since: Date.now() };
  streams.add(entry);
  if (!keepAlive) {
    keepAlive = setInterval(() => {
      const now = Date.now();
      for (const stream of streams)
        if (now - stream.since >= KEEP_ALIVE_MS && !stream.res.writableEnded)
          stream.res.write(': keepalive\n\n');
      if (streams.size === 0) {
        clearInterval(keepAlive);
        keepAlive = undefined;
      }
    }, KEEP_ALIVE_MS);
    keepAlive.unref();
  }
  return () => streams.delete(entry);
}

/**
 * A 2026-07-28 answer: one JSON body, or an SSE stream once a notification must go out first. The result is
 * stamped as the SDK stamps it: `resultType` ("complete" unless the result says otherwise) and the server's
 * identity in `_meta`.
 */
class ModernReply extends Reply {
  readonly #serverInfo: Implementation;
  #unwatch: (() => void) | undefined;

  constructor(res: ServerResponse, id: string | number, serverInfo: Implementation) {
    super(res, id);
    this.#serverInfo = serverInfo;
  }

  async notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void> {
    if (this.done || this.res.writableEnded) return;
    if (!this.res.headersSent) {
      this.res.writeHead(200, SSE_HEADERS);
      this.#unwatch = watchStream(this.res);
    }
    this.res.write(`event: message\ndata: ${JSON.stringify({ jsonrpc: '2.0', ...notification })}\n\n`);
  }

  result(result: Record<string, unknown>): void {
    this.answer({ result: stampModernResult(result, this.#serverInfo), jsonrpc: '2.0', id: this.id });
  }

  protected answer(message: Record<string, unknown>): void {
    if (this.done) return;
    this.done = true;
    this.abandon();
    this.#unwatch?.();
    if (this.res.writableEnded || this.res.destroyed) return;
    const text = serialize(message, this.id);
    if (this.res.headersSent) {
      this.res.end(`event: message\ndata: ${text}\n\n`);
      return;
    }
    // A known length instead of chunked framing: one write, nothing to parse after the body. An in-band error is
    // HTTP 200 except a missing client capability (-32021), which the 2026-07-28 revision (SEP-2575) answers with
    // 400, as the SDK's per-request transport does.
    const code = (message.error as { code?: unknown } | undefined)?.code;
    const status = code === ProtocolErrorCode.MissingRequiredClientCapability ? 400 : 200;
    this.res
      .writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) })
      .end(text);
  }
}

/** A session the fast path may serve a request of: its instance and what a POST stream needs. */
export interface FastSession {
  instance: Server;
  sessionId: string;
  /** The session's event store: every event of a POST stream is stored, so a client can resume it. */
  storeEvent(stream: string, message: unknown): Promise<string>;
  retryIntervalMs: number;
  /**
   * Counts an open stream of the session (a session with one is never idle) and registers the request `id` as
   * cancellable, until the returned call.
   */
  openStream(id: string | number, cancel: (reason: unknown) => void): () => void;
  /** Cancels the request `id` the fast path serves on this session, if it does. */
  cancel(id: string | number): void;
}

/**
 * A 2025-era answer as the SDK's session transport writes it: an SSE stream, a priming event (an id and the
 * retry interval), then the notifications and the response, each stored in the session's event store under
 * this stream's id before it is written.
 */
class LegacyReply extends Reply {
  readonly #session: FastSession;
  readonly #stream = randomUUID();
  /** Writes in order: each event waits for its id from the store. */
  #queue: Promise<void>;

  readonly #protocolVersion: string;
  #closeStream: () => void = () => {};
  #unwatch: () => void = () => {};
  #primeTimer: NodeJS.Timeout | undefined;
  #corked = true;

  constructor(res: ServerResponse, id: string | number, session: FastSession, protocolVersion: string) {
    super(res, id);
    this.#session = session;
    this.#protocolVersion = protocolVersion;
    this.#queue = Promise.resolve();
  }

  override open(): void {
    super.open();
    const { res } = this;
    const session = this.#session;
    this.#closeStream = session.openStream(this.id, (reason) => this.cancel(reason));
    // Headers, the priming event and a quick answer leave in one write (one packet, one wake-up of the client);
    // a call that takes longer gets its headers and priming event after PRIME_DELAY_MS.
    res.cork();
    this.#primeTimer = setTimeout(() => this.#flush(), PRIME_DELAY_MS);
    this.#primeTimer.unref();
    res.writeHead(200, { ...SSE_HEADERS, 'mcp-session-id': session.sessionId });
    this.#unwatch = watchStream(res);
    res.once('close', () => {
      this.#flush();
      this.#closeStream();
    });
    // The SDK primes a stream only for clients that accept an empty data field (2025-11-25 on).
    if (this.#protocolVersion >= '2025-11-25')
      this.#queue = session.storeEvent(this.#stream, {}).then((eventId) => {
        if (!res.writableEnded) res.write(`id: ${eventId}\nretry: ${session.retryIntervalMs}\ndata: \n\n`);
      });
  }

  /** Sends what is corked: the headers and the priming event, with the first event when there is one. */
  #flush(): void {
    clearTimeout(this.#primeTimer);
    if (!this.#corked) return;
    this.#corked = false;
    this.res.uncork();
  }

  notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void> {
    if (this.done) return Promise.resolve();
    return this.#event({ jsonrpc: '2.0', ...notification }, false);
  }

  result(result: Record<string, unknown>): void {
    this.answer({ result, jsonrpc: '2.0', id: this.id });
  }

  protected answer(message: Record<string, unknown>): void {
    if (this.done) return;
    this.done = true;
    if (!this.cancelled) {
      void this.#event(message, true);
      return;
    }
    this.abandon();
    this.#unwatch();
    this.#closeStream();
    void this.#queue.then(() => {
      this.res.end();
      this.#flush();
    });
  }

  #event(message: Record<string, unknown>, last: boolean): Promise<void> {
    this.#queue = this.#queue
      .then(() => this.#session.storeEvent(this.#stream, message))
      .then((eventId) => {
        if (this.res.writableEnded) return;
        const text = `event: message\nid: ${eventId}\ndata: ${serialize(message, this.id)}\n\n`;
        if (!last) {
          this.res.write(text);
          this.#flush();
          return;
        }
        this.abandon();
        this.#unwatch();
        this.#closeStream();
        this.res.end(text);
        this.#flush();
      })
      .catch(() => {
        if (last && !this.res.writableEnded) this.res.end();
        this.#flush();
      });
    return this.#queue;
  }
}
