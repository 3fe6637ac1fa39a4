import { timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  hostHeaderValidation,
  localhostHostValidation,
  localhostOriginValidation,
  originValidation,
  toNodeHandler,
} from '@modelcontextprotocol/node';
import { createMcpHandler, type McpServer, type Server } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { TackError } from '../errors.js';

/** What every served instance gets from its factory: the protocol era of the connection or request. */
export type ServerFactory = (context: { era: 'modern' | 'legacy' }) => McpServer | Server;

/**
 * Change notifications for whatever tack serves. One call reaches every client that can hear it: on stdio the
 * instance sends it (unsolicited on a 2025-era link, on the listen stream on 2026-07-28); over HTTP it is
 * published to the `subscriptions/listen` streams (2025-era HTTP clients are served statelessly and have no
 * channel to hear it on).
 */
export interface Notifier {
  toolsChanged(): void;
  promptsChanged(): void;
  resourcesChanged(): void;
  resourceUpdated(uri: string): void;
}

export interface Served {
  notifier: Notifier;
  /** `http://127.0.0.1:PORT/mcp` over HTTP; undefined on stdio. */
  url: string | undefined;
  close(): Promise<void>;
}

const subscriptions = new WeakMap<Server, { era: 'modern' | 'legacy'; uris: Set<string> }>();

/**
 * Answers `resources/subscribe` on a 2025-era connection and remembers the URIs, so `resourceUpdated` reaches
 * only the connections that asked (unsolicited per-resource updates are wrong on that era). On 2026-07-28 the
 * URIs live in the client's listen filter and the SDK filters delivery itself. The server must declare
 * `resources: { subscribe: true }`.
 */
export function trackSubscriptions(server: Server, era: 'modern' | 'legacy'): void {
  const state = { era, uris: new Set<string>() };
  subscriptions.set(server, state);
  if (era === 'modern') return;
  server.setRequestHandler('resources/subscribe', (request) => {
    state.uris.add(request.params.uri);
    return {};
  });
  server.setRequestHandler('resources/unsubscribe', (request) => {
    state.uris.delete(request.params.uri);
    return {};
  });
}

function wantsUpdate(server: Server, uri: string): boolean {
  const state = subscriptions.get(server);
  return state !== undefined && (state.era === 'modern' || state.uris.has(uri));
}

/** Serves `factory` on this process's stdin/stdout, both eras (`serveStdio`). */
export function serveOnStdio(factory: ServerFactory): Served {
  const instances = new Set<McpServer | Server>();
  const handle = serveStdio(({ era }) => {
    const instance = factory({ era });
    instances.add(instance);
    return instance;
  });
  const each = (fn: (server: Server) => Promise<void>) => {
    for (const instance of instances) {
      const low = 'server' in instance ? instance.server : instance;
      // A notification the instance cannot send (no capability, link closing) is not worth dying for.
      fn(low).catch(() => {});
    }
  };
  return {
    url: undefined,
    notifier: {
      toolsChanged: () => each((s) => s.sendToolListChanged()),
      promptsChanged: () => each((s) => s.sendPromptListChanged()),
      resourcesChanged: () => each((s) => s.sendResourceListChanged()),
      resourceUpdated: (uri) =>
        each((s) => (wantsUpdate(s, uri) ? s.sendResourceUpdated({ uri }) : Promise.resolve())),
    },
    close: () => handle.close(),
  };
}

export interface HttpOptions {
  /** Interface to bind; default 127.0.0.1. Anything but loopback requires `token` and `allowedHosts`. */
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  /** When set, every request needs `Authorization: Bearer <token>`. */
  token?: string | undefined;
  /** Host names accepted in the Host and Origin headers when not bound to loopback. */
  allowedHosts?: readonly string[] | undefined;
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

/**
 * Serves `factory` over Streamable HTTP at `/mcp` (`createMcpHandler`: 2026-07-28 per request, 2025-era
 * clients statelessly). In front of it: Host and Origin checks against DNS rebinding, and the bearer token.
 */
export async function serveHttp(factory: ServerFactory, options: HttpOptions = {}): Promise<Served> {
  const host = options.host ?? '127.0.0.1';
  const loopback = LOOPBACK.has(host);
  if (!loopback && (!options.token || !options.allowedHosts?.length)) {
    throw new TackError('USAGE', `refusing to serve on ${host} without a bearer token and allowed hosts`, {
      hint: 'Bind 127.0.0.1, or set serve.token and serve.allowedHosts in tack.json.',
    });
  }
  const handler = createMcpHandler(({ era }) => factory({ era }));
  const nodeHandler = toNodeHandler(handler);
  const validHost = loopback
    ? localhostHostValidation()
    : hostHeaderValidation([...(options.allowedHosts ?? [])]);
  const validOrigin = loopback
    ? localhostOriginValidation()
    : originValidation([...(options.allowedHosts ?? [])]);
  const authorized = bearerCheck(options.token);

  const server = createServer((req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    if (!authorized(req, res)) return;
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    if (path !== '/mcp') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the MCP endpoint is /mcp\n');
      return;
    }
    void nodeHandler(req, res);
  });
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
  return {
    url: `http://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${port}/mcp`,
    notifier: {
      toolsChanged: () => void handler.notify.toolsChanged(),
      promptsChanged: () => void handler.notify.promptsChanged(),
      resourcesChanged: () => void handler.notify.resourcesChanged(),
      resourceUpdated: (uri) => void handler.notify.resourceUpdated(uri),
    },
    close: async () => {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** 401 with a WWW-Authenticate challenge unless the request carries the token; constant-time comparison. */
function bearerCheck(token: string | undefined): (req: IncomingMessage, res: ServerResponse) => boolean {
  if (!token) return () => true;
  const expected = Buffer.from(token);
  return (req, res) => {
    const header = req.headers.authorization ?? '';
    const given = Buffer.from(header.startsWith('Bearer ') ? header.slice(7).trim() : '');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return true;
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
