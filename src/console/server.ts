import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { extname, join, normalize, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { localhostHostValidation, localhostOriginValidation } from '@modelcontextprotocol/node';
import type { TackConfig } from '../config/load.js';
import { TackError } from '../errors.js';
import { McpHost } from '../mcp/host.js';
import { openStore } from '../store/open.js';
import { requestTarget } from '../util/request-target.js';
import type { WarningSink } from '../util/warnings.js';
import { appRoutes } from './apps.js';
import { callRoutes } from './calls.js';
import { catalogRoutes } from './catalog.js';
import { ConsoleContext } from './context.js';
import { bearerOf, COMMON_HEADERS, consoleCsp, sendError, sendJson, tokenMatcher } from './http.js';
import { knowledgeRoutes } from './knowledge.js';
import { listingRoutes } from './listings.js';
import { overviewRoutes } from './overview.js';
import { apiSegments, RouteTable, readBodyObject } from './routes.js';
import { startSandbox } from './sandbox.js';
import { securityRoutes } from './security.js';
import { sessionRoutes } from './sessions.js';
import { skillRoutes } from './skills.js';

export interface ConsoleOptions {
  config: TackConfig;
  /**
   * A host to show, with the store it was given (the caller closes both); default: one started from `config`
   * over the store of `config.paths`, both opened here and closed with the console.
   */
  host?: McpHost;
  /** 0 (default) picks a free port. Always bound to 127.0.0.1. */
  port?: number;
  /** The session token; default 32 random bytes. Tests and benchmarks pass none. */
  token?: string;
  /** The built front end (index.html, assets/); default: the one shipped in the package. */
  assetsDir?: string;
  onWarning?: WarningSink;
}

export interface RunningConsole {
  /** The URL to open: the console's origin with the token, the only way in. */
  url: string;
  origin: string;
  token: string;
  host: McpHost;
  /** Stops the console, and the host it started when it was given none. */
  close(): Promise<void>;
}

/** The shipped front end: `dist/console` next to `dist/src`, from the built module or from the sources. */
export function defaultAssetsDir(): string {
  const here = fileURLToPath(new URL('.', import.meta.url));
  const candidates = [resolve(here, '../../console'), resolve(here, '../../dist/console')];
  return candidates.find((dir) => existsSync(join(dir, 'index.html'))) ?? candidates[0]!;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.woff2': 'font/woff2',
};

/** Page routes worth a token check; anything else is 404 (no directory listing, no other files). */
const PAGE = /^\/(index\.html)?$/;

/** The API (`/api/...`): each section's routes, over the state they share (context.ts). */
const API_ROUTES = new RouteTable([
  ...overviewRoutes,
  ...catalogRoutes,
  ...callRoutes,
  ...listingRoutes,
  ...sessionRoutes,
  ...securityRoutes,
  ...knowledgeRoutes,
  ...skillRoutes,
  ...appRoutes,
]);

/**
 * `tack console`: a local web application over the library, a thin HTTP layer like the CLI. Bound to
 * 127.0.0.1; Host and Origin are checked as `tack serve --http` checks them (DNS rebinding), and every page and
 * API answer needs the session token: the page URL carries it once (`/?token=`), the page sends it back as a
 * bearer header on every API request, so nothing a browser sends on its own (a cookie) can stand in for it.
 */
export async function startConsole(options: ConsoleOptions): Promise<RunningConsole> {
  const { config } = options;
  const token = options.token ?? randomBytes(32).toString('base64url');
  const assetsDir = options.assetsDir ?? defaultAssetsDir();
  const indexFile = join(assetsDir, 'index.html');
  if (!existsSync(indexFile))
    throw new TackError('USAGE', `the console's front end is not built (${indexFile} is missing)`, {
      hint: 'Run `npm run build` in the tack repository.',
    });
  const ownHost = options.host === undefined;
  // The console is a composition root like the CLI and startGateway: the host it builds gets the store opened
  // here (sessions, pins, audit, era verdicts, token counts), closed after the host when the console stops.
  const ownStore = ownHost ? await openStore(config, options.onWarning) : undefined;
  const host = options.host ?? new McpHost({ config, store: ownStore });
  // Servers start in the background: the page opens at once and shows them connecting.
  const connecting = ownHost ? host.connectAll().catch(() => {}) : Promise.resolve();
  const context = new ConsoleContext(host, config, connecting);
  const handle = requestHandler(context, tokenMatcher(token), assetsDir);
  const server = createServer((req, res) => {
    void handle(req, res);
  });
  try {
    await listen(server, options.port ?? 0);
    context.sandbox = await startSandbox(context.views);
  } catch (error) {
    server.close();
    // Nothing listens: what was started for the console stops with it.
    if (ownHost) await host.close();
    await ownStore?.close();
    throw error;
  }
  const origin = context.listening((server.address() as AddressInfo).port);
  return {
    url: `${origin}/?token=${token}`,
    origin,
    token,
    host,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
      await context.sandbox?.close();
      await context.close();
      if (ownHost) await host.close();
      await ownStore?.close();
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise<void>((resolveListen, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        new TackError('USAGE', `cannot listen on 127.0.0.1:${port}: ${error.code ?? error.message}`, {
          hint:
            error.code === 'EADDRINUSE'
              ? 'Pick another port with --port, or stop what holds this one.'
              : undefined,
        }),
      ),
    );
    server.listen(port, '127.0.0.1', resolveListen);
  });
}

/**
 * Every request, in the order of its checks: Host and Origin first, then the API (token, route) or the page
 * (token) or the front end's own files (no token, no data).
 */
function requestHandler(
  context: ConsoleContext,
  tokenOk: (given: string | undefined) => boolean,
  assetsDir: string,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const validHost = localhostHostValidation();
  const validOrigin = localhostOriginValidation();
  const indexFile = join(assetsDir, 'index.html');
  return async (req, res) => {
    if (!validHost(req, res) || !validOrigin(req, res)) return;
    // Stricter than the SDK's check (which accepts any localhost port): a page on another local port is
    // another site, and may not drive this one.
    const origin = req.headers.origin;
    if (origin !== undefined && !context.isOwnOrigin(origin))
      return sendProblem(res, 403, 'FORBIDDEN', `origin ${origin} is not this console`);
    const url = requestTarget(req.url);
    if (!url) return sendProblem(res, 400, 'BAD_REQUEST', 'the request target is not a URL');
    if (url.pathname.startsWith('/api/')) {
      if (tokenOk(bearerOf(req))) return serveApi(context, req, res, url);
      res.writeHead(401, { ...COMMON_HEADERS, 'www-authenticate': 'Bearer realm="tack console"' }).end();
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, COMMON_HEADERS).end();
      return;
    }
    if (PAGE.test(url.pathname)) {
      if (tokenOk(url.searchParams.get('token') ?? undefined))
        return servePage(res, indexFile, context.sandbox?.origin);
      res
        .writeHead(401, {
          ...COMMON_HEADERS,
          'content-type': 'text/plain; charset=utf-8',
          'content-security-policy': "default-src 'none'",
        })
        .end('tack console: open the URL `tack console` printed (it carries the session token).\n');
      return;
    }
    if (url.pathname.startsWith('/assets/') && serveAsset(res, assetsDir, url.pathname)) return;
    res.writeHead(404, { ...COMMON_HEADERS, 'content-type': 'text/plain' }).end('Not found\n');
  };
}

/** An authenticated API request: its route's answer, or 400 (a path that does not decode), 404, an error. */
async function serveApi(context: ConsoleContext, req: IncomingMessage, res: ServerResponse, url: URL) {
  const method = req.method ?? 'GET';
  const segments = apiSegments(url.pathname);
  if (!Array.isArray(segments)) {
    const message = `the path ${url.pathname} has a malformed percent-escape in "${segments.malformed}"`;
    return sendProblem(res, 400, 'BAD_REQUEST', message);
  }
  const match = API_ROUTES.match(method, segments);
  if (!match) return sendProblem(res, 404, 'NOT_FOUND', `no API ${method} ${url.pathname}`);
  const { route, params } = match;
  const call = { context, req, params, query: url.searchParams, body: () => readBodyObject(req) };
  try {
    if ('stream' in route) await route.stream(call, res);
    else sendJson(res, 200, await route.json(call));
  } catch (error) {
    if (!res.headersSent) sendError(res, error);
    else res.end();
  }
}

/** The page (its token checked): its policy allows the sandbox origin as the one frame source. */
function servePage(res: ServerResponse, indexFile: string, sandboxOrigin: string | undefined): void {
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': consoleCsp(sandboxOrigin),
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
  });
  res.end(readFileSync(indexFile));
}

/** An answer the routes never give: a refused origin, a request target or path that does not parse, no route. */
function sendProblem(res: ServerResponse, status: number, code: string, message: string): void {
  sendJson(res, status, { error: { code, message } });
}

/** The front end's own files (no data): served without the token, by name inside assets/ only. */
function serveAsset(res: ServerResponse, assetsDir: string, pathname: string): boolean {
  const root = join(assetsDir, 'assets');
  const file = normalize(join(root, pathname.slice('/assets/'.length)));
  const type = TYPES[extname(file)];
  if (!file.startsWith(root + sep) || !type || !existsSync(file)) return false;
  res.writeHead(200, {
    ...COMMON_HEADERS,
    'content-type': type,
    'cache-control': 'public, max-age=31536000, immutable',
  });
  res.end(readFileSync(file));
  return true;
}
