import {
  classifyInboundRequest,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type Server,
  type Transport,
} from '@modelcontextprotocol/server';
import type { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import {
  cancelledRequest,
  errorResponse,
  type FastMessage,
  type FastPath,
  type FastReply,
  plainToolCall,
  stampModernResult,
} from './fast-path.js';

const MODERN_REVISION = '2026-07-28';

/**
 * The fast path on stdio (fast-path.ts explains it for HTTP): the SDK's stdio transport reads and frames the
 * messages as always, and this wrapper, which `serveStdio` is given as its transport, answers a plain
 * `tools/call` itself instead of handing it to the SDK's instance, which would validate the request again,
 * dispatch it and validate the result the upstream client already validated. Everything else, and every
 * request of a connection whose era is not settled, goes to `serveStdio` unchanged.
 */
export class FastStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void;
  readonly #inner: StdioServerTransport;
  readonly #fast: FastPath;
  /** The connection's 2025-era instance once its client has initialized it; undefined on a modern connection. */
  readonly #legacy: () => Server | undefined;
  /** Fast calls in flight, by request id: a cancellation or the end of the connection stops them. */
  readonly #inFlight = new Map<string | number, StdioReply>();

  constructor(fast: FastPath, legacy: () => Server | undefined, inner: StdioServerTransport) {
    this.#inner = inner;
    this.#fast = fast;
    this.#legacy = legacy;
  }

  start(): Promise<void> {
    this.#inner.onmessage = (message) => this.#receive(message);
    this.#inner.onerror = (error) => this.onerror?.(error);
    this.#inner.onclose = () => {
      // As the SDK does when stdin ends: requests in flight are aborted and not answered.
      for (const reply of this.#inFlight.values()) reply.cancel(new Error('the connection closed'));
      this.onclose?.();
    };
    return this.#inner.start();
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.#inner.send(message);
  }

  close(): Promise<void> {
    return this.#inner.close();
  }

  #receive(message: JSONRPCMessage): void {
    const call = plainToolCall(message);
    if (call && this.#offer(call)) return;
    if (!call) {
      const cancelled = cancelledRequest(message);
      if (cancelled !== undefined) this.#inFlight.get(cancelled)?.cancel(new Error('the client cancelled'));
    }
    this.onmessage?.(message);
  }

  #offer(message: FastMessage): boolean {
    if (this.#inFlight.has(message.id)) return false;
    const route = classifyInboundRequest({ httpMethod: 'POST', body: message });
    const legacy = this.#legacy();
    let era: 'modern' | 'legacy';
    if (route.kind === 'modern' && !legacy) {
      if (route.classification.revision !== MODERN_REVISION) return false;
      era = 'modern';
    } else if (route.kind === 'legacy' && legacy) {
      // A client that lists roots answers roots/list on the SDK's path.
      if (legacy.getClientCapabilities()?.roots !== undefined) return false;
      era = 'legacy';
    } else return false;
    const reply = new StdioReply(this, message.id, era === 'modern' ? this.#fast.serverInfo : undefined);
    if (!this.#fast.take({ era, message, instance: era === 'legacy' ? legacy : undefined, reply }))
      return false;
    this.#inFlight.set(message.id, reply);
    reply.finished = () => {
      if (this.#inFlight.get(message.id) === reply) this.#inFlight.delete(message.id);
    };
    return true;
  }
}

/** One fast call's answer on stdio: notifications and the response as the SDK's instance would send them. */
class StdioReply implements FastReply {
  readonly #abort = new AbortController();
  readonly signal = this.#abort.signal;
  readonly #transport: Transport;
  readonly #id: string | number;
  /** The server's identity on a 2026-07-28 connection (results are stamped); undefined on a 2025-era one. */
  readonly #serverInfo: FastPath['serverInfo'] | undefined;
  #done = false;
  finished: () => void = () => {};

  constructor(transport: Transport, id: string | number, serverInfo: FastPath['serverInfo'] | undefined) {
    this.#transport = transport;
    this.#id = id;
    this.#serverInfo = serverInfo;
  }

  /** Cancelled or the connection closed: the call stops and, as with the SDK, no response is sent. */
  cancel(reason: unknown): void {
    if (this.#done) return;
    this.#done = true;
    this.#abort.abort(reason);
    this.finished();
  }

  async notify(notification: { method: string; params?: Record<string, unknown> }): Promise<void> {
    if (this.#done) return;
    await this.#transport.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage);
  }

  result(result: Record<string, unknown>): void {
    const encoded = this.#serverInfo ? stampModernResult(result, this.#serverInfo) : result;
    this.#answer({ result: encoded, jsonrpc: '2.0', id: this.#id });
  }

  error(error: unknown): void {
    this.#answer(errorResponse(this.#id, error));
  }

  #answer(message: Record<string, unknown>): void {
    if (this.#done) return;
    this.#done = true;
    this.finished();
    // A result JSON has no form for becomes the SDK's internal error rather than no answer at all.
    this.#transport
      .send(message as JSONRPCMessage)
      .catch((error: unknown) =>
        this.#transport.send(
          errorResponse(
            this.#id,
            new Error(`the answer cannot be written: ${String(error)}`),
          ) as JSONRPCMessage,
        ),
      )
      .catch(() => {});
  }
}
