import { randomUUID } from 'node:crypto';
import {
  type EventStore,
  type JSONRPCMessage,
  type Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';
import { maxOf } from '../../util/arrays.js';
import type { FastSession } from './fast-path.js';
import type { LiveInstances, ServerFactory } from './instances.js';

/** Sessions held at once; past it, a new one closes the least recently used session of the busiest opener. */
export const MAX_SESSIONS = 1000;
const IDLE_MS = 30 * 60_000;
const SWEEP_INTERVAL_MS = 60_000;
const EVENTS_PER_SESSION = 1000;
const RETRY_INTERVAL_MS = 1000;

export interface LegacySessionOptions {
  /** A session with no request and no open stream for this long is closed (default 30 minutes). */
  idleMs?: number | undefined;
  /** Sessions held at once (default MAX_SESSIONS). */
  maxSessions?: number | undefined;
  /** How often idle sessions are looked for (default every minute). */
  sweepIntervalMs?: number | undefined;
  /**
   * Put before every session id with a dot (`serve.instance`): a load balancer routes a session's requests to the
   * instance that holds it by this prefix (docs/deploy.md), since the session's first request carries no id.
   */
  idPrefix?: string | undefined;
}

interface Session {
  transport: WebStandardStreamableHTTPServerTransport;
  instance: Server;
  events: EventStore;
  /** Requests the fast path serves on this session, by JSON-RPC id, to cancel on notifications/cancelled. */
  fastCalls: Map<string | number, (reason: unknown) => void>;
  /** When the last request came or the last stream ended. */
  seen: number;
  /** Open SSE response streams (the GET stream, a POST answered as a stream). */
  streams: number;
  /** Who opened it (http-entry.ts `peerOf`): sessions run short for the busiest opener first. */
  opener: string;
}

/**
 * 2025-era HTTP clients with a session each, as that era expects: `initialize` opens it (`Mcp-Session-Id`),
 * one instance serves it until DELETE or 30 idle minutes (a session with an open stream is not idle), and the session carries what a stateless POST
 * cannot: the client's capabilities for server-to-client requests (elicitation, sampling), its log level,
 * cancellations, subscriptions, the GET stream for notifications, and resumable streams (Last-Event-ID). The
 * SDK's default stateless posture gives each POST a fresh instance that knows none of this.
 */
export class LegacySessions {
  readonly #factory: ServerFactory;
  readonly #live: LiveInstances;
  readonly #sessions = new Map<string, Session>();
  readonly #idleMs: number;
  readonly #maxSessions: number;
  readonly #idPrefix: string | undefined;
  readonly #sweeper: NodeJS.Timeout;

  constructor(factory: ServerFactory, live: LiveInstances, options: LegacySessionOptions = {}) {
    this.#factory = factory;
    this.#live = live;
    this.#idleMs = options.idleMs ?? IDLE_MS;
    this.#maxSessions = options.maxSessions ?? MAX_SESSIONS;
    this.#idPrefix = options.idPrefix;
    this.#sweeper = setInterval(() => this.#sweep(), options.sweepIntervalMs ?? SWEEP_INTERVAL_MS);
    this.#sweeper.unref();
  }

  /**
   * Serves one request of a 2025-era client; `parsedBody` is its body already parsed (read once upstream),
   * `opener` who sends it (an address).
   */
  async serve(request: Request, parsedBody?: unknown, opener = 'unknown'): Promise<Response> {
    const options = parsedBody === undefined ? undefined : { parsedBody };
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
      const session = this.#sessions.get(sessionId);
      if (!session) return jsonError(404, -32001, 'Session not found: initialize again');
      session.seen = Date.now();
      return trackStream(session, request, await session.transport.handleRequest(request, options));
    }
    if (request.method !== 'POST')
      return jsonError(400, -32000, 'Bad Request: Mcp-Session-Id header is required');
    if (this.#sessions.size >= this.#maxSessions) this.#makeRoom(opener);
    const instance = this.#live.add(this.#factory({ era: 'legacy' }));
    const events = boundedEventStore(EVENTS_PER_SESSION);
    const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => (this.#idPrefix ? `${this.#idPrefix}.${randomUUID()}` : randomUUID()),
      eventStore: events,
      retryInterval: RETRY_INTERVAL_MS,
      onsessioninitialized: (id) => {
        this.#sessions.set(id, {
          transport,
          instance,
          events,
          fastCalls: new Map(),
          seen: Date.now(),
          streams: 0,
          opener,
        });
      },
      onsessionclosed: (id) => {
        this.#sessions.delete(id);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId);
      this.#live.delete(instance);
      void instance.close();
    };
    await instance.connect(transport);
    const response = await transport.handleRequest(request, options);
    // Anything but an initialize (refused by the transport) leaves no session behind.
    if (!transport.sessionId) await transport.close();
    return response;
  }

  /**
   * The session `sessionId` names, for the fast path (fast-path.ts) to answer one of its requests on a stream
   * of its own: undefined unless the session is live and its client initialized.
   */
  fastSession(sessionId: string | undefined): FastSession | undefined {
    const session = sessionId === undefined ? undefined : this.#sessions.get(sessionId);
    if (!session?.instance.getClientCapabilities()) return undefined;
    session.seen = Date.now();
    return {
      instance: session.instance,
      sessionId: sessionId as string,
      storeEvent: (stream, message) => session.events.storeEvent(stream, message as JSONRPCMessage),
      retryIntervalMs: RETRY_INTERVAL_MS,
      openStream: (id, cancel) => {
        session.streams++;
        session.fastCalls.set(id, cancel);
        let open = true;
        return () => {
          if (!open) return;
          open = false;
          session.streams--;
          if (session.fastCalls.get(id) === cancel) session.fastCalls.delete(id);
          session.seen = Date.now();
        };
      },
      cancel: (id) => session.fastCalls.get(id)?.(new Error('the client cancelled the request')),
    };
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    await Promise.all([...this.#sessions.values()].map(({ transport }) => transport.close().catch(() => {})));
    this.#sessions.clear();
  }

  /** Closes sessions idle too long. */
  #sweep(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      // A client listening on its GET stream sends no requests, yet is there: only a silent session is idle.
      if (session.streams === 0 && now - session.seen > this.#idleMs)
        void session.transport.close().catch(() => {});
    }
  }

  /**
   * Sessions are full: idle ones go first; then a session of the opener itself, or else of the opener holding
   * the most, the least recently used. One client opening sessions in a loop churns its own, not other clients'.
   */
  #makeRoom(opener: string): void {
    this.#sweep();
    const held = new Map<string, Session[]>();
    for (const session of this.#sessions.values()) {
      const list = held.get(session.opener) ?? [];
      list.push(session);
      held.set(session.opener, list);
    }
    // The opener's own; else the sessions of the openers holding the most, the least recently used of them all.
    let victims = held.get(opener);
    if (!victims) {
      const most = maxOf([...held.values()].map((list) => list.length));
      victims = [...held.values()].filter((list) => list.length === most).flat();
    }
    const oldest = victims.reduce<Session | undefined>((a, b) => (!a || b.seen < a.seen ? b : a), undefined);
    if (!oldest) return;
    // Deleted now: closing is asynchronous, and the next initialize must see the room.
    for (const [id, session] of this.#sessions) if (session === oldest) this.#sessions.delete(id);
    void oldest.transport.close().catch(() => {});
  }
}

/**
 * Counts `response` as an open stream of `session` until it ends: the transport closes it, the client goes
 * away (the request is aborted), or the body is cancelled.
 */
function trackStream(session: Session, request: Request, response: Response): Response {
  if (!response.body || !response.headers.get('content-type')?.includes('text/event-stream')) return response;
  session.streams++;
  let open = true;
  const end = () => {
    if (!open) return;
    open = false;
    session.streams--;
    session.seen = Date.now();
  };
  request.signal.addEventListener('abort', end, { once: true });
  const reader = response.body.getReader();
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (!done) return controller.enqueue(value);
        end();
        controller.close();
      } catch (error) {
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  const { status, statusText, headers } = response;
  return new Response(body, { status, statusText, headers });
}

function jsonError(status: number, code: number, message: string): Response {
  return Response.json({ jsonrpc: '2.0', error: { code, message }, id: null }, { status });
}

/**
 * The last `limit` events of a session's streams, so a client that reconnects with Last-Event-ID gets what it
 * missed. Hand-written: the SDK ships the interface, not a store; one session's events in a ring are enough.
 */
function boundedEventStore(limit: number): EventStore {
  const events: Array<{ id: string; stream: string; message: JSONRPCMessage }> = [];
  let next = 0;
  return {
    async storeEvent(stream, message) {
      const id = `${stream}::${String(++next).padStart(12, '0')}`;
      events.push({ id, stream, message });
      if (events.length > limit) events.shift();
      return id;
    },
    async replayEventsAfter(lastEventId, { send }) {
      const stream = lastEventId.split('::')[0] ?? lastEventId;
      for (const event of events) {
        if (event.stream === stream && event.id > lastEventId) await send(event.id, event.message);
      }
      return stream;
    },
  };
}
