import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Readable, Writable } from 'node:stream';
import { hostHeaderValidation, originValidation } from '@modelcontextprotocol/node';
import {
  createMcpHandler,
  localhostAllowedHostnames,
  localhostAllowedOrigins,
  type Server,
} from '@modelcontextprotocol/server';
import { StdioServerTransport, serveStdio } from '@modelcontextprotocol/server/stdio';
import { DEFAULT_LIMITS } from '../config/limits.js';
import { TackError } from '../errors.js';
import { guardIncoming } from '../mcp/depth-guard.js';
import { requestTarget } from '../util/request-target.js';
import { within } from '../util/within.js';
import type { FastPath } from './serving/fast-path.js';
import { FastStdioTransport } from './serving/fast-stdio.js';
import { mcpEntry } from './serving/http-entry.js';
import { LiveInstances, type Notifier, type ServerFactory } from './serving/instances.js';
import { type LegacySessionOptions, LegacySessions } from './serving/legacy-sessions.js';
import { paramHeaderCheck } from './serving/mcp-param-headers.js';

export type { FastPath, FastReply, FastRequest } from './serving/fast-path.js';
export { type Notifier, type ServerFactory, trackSubscriptions } from './serving/instances.js';

/** A started server: its URL over HTTP (none over stdio), and how to drain and stop it. */
export interface Served {
  notifier: Notifier;
  /** `http://127.0.0.1:PORT/mcp` over HTTP; undefined on stdio. */
  url: string | undefined;
  /** Stops serving and closes what the server opened. */
  close(): Promise<void>;
  /**
   * Graceful shutdown (HTTP): /readyz answers 503 and new connections are refused, requests in flight get up to
   * `timeoutMs` to finish, then everything closes. Stdio closes at once.
   */
  drain?(timeoutMs: number): Promise<{ finished: number; cut: number }>;
}

export interface StdioOptions {
  /** Plain `tools/call` requests answered without the SDK's instance (serving/fast-stdio.ts; the gateway's). */
  fastPath?: FastPath | undefined;
  /** The deepest JSON a message may carry (limits.jsonDepth; default 64). */
  jsonDepth?: number | undefined;
  /** Streams to serve on instead of this process's stdin and stdout (tests). */
  stdin?: Readable | undefined;
  stdout?: Writable | undefined;
}

/** Serves `factory` on this process's stdin/stdout (or the streams given), both eras (`serveStdio`). */
export function serveOnStdio(factory: ServerFactory, options: StdioOptions = {}): Served {
  const live = new LiveInstances();
  /** The connection's 2025-era instance, once its client initialized it (for the fast path). */
  let legacy: Server | undefined;
  const stdio = new StdioServerTransport(options.stdin, options.stdout);
  // A message nested past limits.jsonDepth is refused before the SDK (or the fast path) walks it: the SDK's
  // validation recurses, and overflowed the stack ("-32603 Maximum call stack size exceeded").
  guardIncoming(stdio, options.jsonDepth ?? DEFAULT_LIMITS.jsonDepth, () => {}, 'client');
  const handle = serveStdio(
    (context) => {
      const instance = factory(context);
      // Forgotten when it closes: the connection ends, or the SDK discards its `server/discover` probe instance.
      const server = live.add(instance);
      if (context.era === 'legacy') legacy = server;
      const onclose = server.onclose;
      server.onclose = () => {
        live.delete(server);
        if (legacy === server) legacy = undefined;
        onclose?.();
      };
      return instance;
    },
    {
      transport: options.fastPath
        ? new FastStdioTransport(
            options.fastPath,
            () => (legacy?.getClientCapabilities() ? legacy : undefined),
            stdio,
          )
        : stdio,
    },
  );
  return { url: undefined, notifier: live, close: () => handle.close() };
}

/** Streamable HTTP: where to listen (127.0.0.1 by default), the allowed hosts and the bearer token. */
export interface HttpOptions {
  /** Interface to bind; default 127.0.0.1. Anything but loopback requires `token` and `allowedHosts`. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Host names accepted in the Host and Origin headers when not bound to loopback. */
  allowedHosts?: readonly string[] | undefined;
  /** How long 2025-era sessions may stay idle (tests shorten it). */
  legacySessions?: LegacySessionOptions | undefined;
  /**
   * The input schema of a served tool by its served name, for a factory of low-level `Server`s serving schemas
   * it did not build (the gateway): 2026-07-28 `tools/call` requests get their SEP-2243 `Mcp-Param-*` headers
   * checked against it (serving/mcp-param-headers.ts). The SDK checks `McpServer` tools itself.
   */
  toolInputSchema?: ((tool: string) => unknown) | undefined;
  /** The deepest JSON a request may carry (limits.jsonDepth, default 64); deeper gets a JSON-RPC error. */
  jsonDepth?: number | undefined;
  /**
   * What /readyz checks besides not draining (the gateway: its store answers). Rejects when not ready; the reason
   * is not shown to the caller, which needs no token to ask.
   */
  readiness?: (() => Promise<void>) | undefined;
  /** Awaited before each MCP request reaches the factory's instances (the gateway reviews a new catalog first). */
  beforeRequest?: (() => Promise<void>) | undefined;
  /** Plain `tools/call` requests answered without an SDK instance (serving/fast-path.ts; the gateway's). */
  fastPath?: FastPath | undefined;
}

/** Health endpoints, answered before the Host, Origin and token checks: load balancers probe by address. */
const HEALTH_PATHS = new Set(['/healthz', '/readyz']);
/** The longest a readiness check may take before /readyz says no. */
const READINESS_TIMEOUT_MS = 2_000;
/**
 * A readiness answer is reused this long, and probes arriving while a check runs share it: /readyz needs no token,
 * and a check per probe would let anyone who can reach the port queue store round trips in front of the audit
 * writes of real calls. Balancers probe every few seconds; a second's staleness costs them nothing.
 */
const READINESS_REUSE_MS = 1_000;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const KEEP_ALIVE_MS = 65_000;

/** The path of a request target (`/mcp?x` is `/mcp`), without building a URL per request. */
function pathOf(url: string | undefined): string {
  if (url === undefined) return '/';
  const end = url.search(/[?#]/);
  const path = end < 0 ? url : url.slice(0, end);
  if (path.startsWith('/')) return path;
  // An absolute-form target (a proxy's `http://host/mcp`): its path; one that is no URL is no path of ours.
  return requestTarget(url)?.pathname ?? '';
}

/**
 * Serves `factory` over Streamable HTTP at `/mcp`: 2026-07-28 per request (`createMcpHandler`), 2025-era
 * clients in sessions (`LegacySessions`). In front of it: Host and Origin checks against DNS rebinding, and
 * the bearer token.
 */
export async function serveHttp(factory: ServerFactory, options: HttpOptions = {}): Promise<Served> {
  const host = options.host ?? '127.0.0.1';
  const loopback = LOOPBACK.has(host);
  if (!loopback && (!options.token || !options.allowedHosts?.length)) {
    throw new TackError('USAGE', `refusing to serve on ${host} without a bearer token and allowed hosts`, {
      hint: 'Bind 127.0.0.1, or set serve.token and serve.allowedHosts in tack.json.',
    });
  }
  // Allowed hosts on loopback serve one purpose: a reverse proxy forwarding the network's requests (docs/deploy.md).
  // Without a token that proxy would open every upstream's credentials to whoever reaches it.
  if (loopback && options.allowedHosts?.length && !options.token) {
    throw new TackError(
      'USAGE',
      `refusing to serve on ${host} for allowed hosts (${options.allowedHosts.join(', ')}) without a bearer token`,
      {
        hint: 'serve.allowedHosts on a loopback address is for a reverse proxy in front of tack, which reaches it from the network: set serve.token too (or drop serve.allowedHosts).',
      },
    );
  }
  // 2026-07-28 requests are stateless (one instance per request); 2025-era clients get sessions.
  const handler = createMcpHandler(factory, { legacy: 'reject' });
  const live = new LiveInstances(handler.notify);
  const legacy = new LegacySessions(factory, live, options.legacySessions);
  const entry = mcpEntry({
    modern: handler,
    legacy,
    jsonDepth: options.jsonDepth ?? DEFAULT_LIMITS.jsonDepth,
    paramHeaders: options.toolInputSchema && paramHeaderCheck(options.toolInputSchema),
    fastPath: options.fastPath,
    beforeRequest: options.beforeRequest,
  });
  // On loopback the machine's own names always pass, and so do allowedHosts: a reverse proxy on the same machine
  // (docs/deploy.md's nginx) forwards the name clients used, which would otherwise be refused as a rebinding.
  const allowed = [...(options.allowedHosts ?? [])];
  const validHost = hostHeaderValidation(loopback ? [...localhostAllowedHostnames(), ...allowed] : allowed);
  const validOrigin = originValidation(loopback ? [...localhostAllowedOrigins(), ...allowed] : allowed);
  const authorized = bearerCheck(options.token);

  let draining = false;
  /** MCP requests whose response has not ended; GET streams (notifications only) are not waited for. */
  const inFlight = new Set<ServerResponse>();
  let settled: (() => void) | undefined;
  const server = createServer((req, res) => {
    const path = pathOf(req.url);
    if (HEALTH_PATHS.has(path)) {
      void health(path, res);
      return;
    }
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    if (!authorized(req, res)) return;
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the MCP endpoint is /mcp\n');
      return;
    }
    if (draining) {
      // A request on a kept-alive connection after the drain began: the load balancer retries it elsewhere.
      res
        .writeHead(503, { 'content-type': 'text/plain', connection: 'close', 'retry-after': '1' })
        .end('tack serve is shutting down\n');
      return;
    }
    if (req.method === 'POST') {
      inFlight.add(res);
      res.once('close', () => {
        inFlight.delete(res);
        if (inFlight.size === 0) settled?.();
      });
    }
    void entry(req, res);
  });
  let lastCheck: { ready: Promise<boolean>; settledAt: number | undefined } | undefined;
  const checkReadiness = (): Promise<boolean> => {
    const last = lastCheck;
    if (last && (last.settledAt === undefined || Date.now() - last.settledAt < READINESS_REUSE_MS))
      return last.ready;
    const check: { ready: Promise<boolean>; settledAt: number | undefined } = {
      ready: withTimeout(options.readiness?.(), READINESS_TIMEOUT_MS).then(
        () => true,
        () => false,
      ),
      settledAt: undefined,
    };
    void check.ready.then(() => {
      check.settledAt = Date.now();
    });
    lastCheck = check;
    return check.ready;
  };
  const health = async (path: string, res: ServerResponse) => {
    const answer = (status: number, text: string) =>
      res.writeHead(status, { 'content-type': 'text/plain', 'cache-control': 'no-store' }).end(`${text}\n`);
    // Alive as long as the process answers; ready when not draining and what the caller depends on answers.
    if (path === '/healthz') return answer(200, 'ok');
    if (draining) return answer(503, 'draining');
    const ready = await checkReadiness();
    if (draining) return answer(503, 'draining');
    answer(ready ? 200 : 503, ready ? 'ready' : 'not ready');
  };
  // Keep-alive: clients reuse their connections; the idle timeout outlasts a client's pause between calls
  // (Node's default, 5 s, closes them under a client that thinks a little), and headers get their own bound.
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.headersTimeout = KEEP_ALIVE_MS + 1000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new TackError(
          'USAGE',
          `cannot listen on ${host}:${options.port ?? 0}: ${error.code ?? error.message}`,
          {
            hint: error.code === 'EADDRINUSE' ? 'Pick another port or stop what holds this one.' : undefined,
          },
        ),
      ),
    );
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const close = async () => {
    draining = true;
    await Promise.all([handler.close(), legacy.close()]);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  };
  return {
    url: `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}/mcp`,
    notifier: live,
    close,
    drain: async (timeoutMs) => {
      draining = true;
      // No new connections; idle kept-alive ones close now, busy ones once their response is sent.
      server.close();
      server.closeIdleConnections();
      const waiting = inFlight.size;
      if (waiting > 0) {
        const done = new Promise<void>((resolve) => {
          settled = resolve;
        });
        await withTimeout(done, timeoutMs).catch(() => {});
      }
      const cut = inFlight.size;
      await close();
      return { finished: waiting - cut, cut };
    },
  };
}

/** `work`, or a rejection once `ms` pass; the timer does not keep the process alive. */
async function withTimeout(work: Promise<void> | undefined, ms: number): Promise<void> {
  if (!(await within(work, ms)).done) throw new Error(`timed out after ${ms} ms`);
}

/**
 * 401 with a WWW-Authenticate challenge unless the request carries the token. The scheme is case-insensitive
 * (RFC 9110); digests are compared, in constant time, so neither the token nor its length shows in the timing.
 */
function bearerCheck(token: string | undefined): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!token) return () => true;
  const sha256 = (value: string) => createHash('sha256').update(value).digest();
  const expected = sha256(token);
  return (req, res) => {
    const header = req.headers.authorization ?? '';
    const given = /^bearer\s+(.*)$/i.exec(header)?.[1]?.trim();
    if (given !== undefined && timingSafeEqual(sha256(given), expected)) return true;
    const error = header ? 'invalid_token' : 'invalid_request';
    res
      .writeHead(401, {
        'content-type': 'application/json',
        'www-authenticate': `Bearer realm="tack", error="${error}"`,
      })
      .end(
        JSON.stringify({
          jsonrpc: '2.0',
          error: { code: -32001, message: header ? 'invalid bearer token' : 'missing bearer token' },
          id: null,
        }),
      );
    return false;
  };
}
