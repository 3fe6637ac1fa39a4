import { createServer, type IncomingHttpHeaders, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import type { SandboxNetworkRule } from '../config/sandbox.js';

/**
 * The filtering proxy behind a network allow-list. It runs in tack's process, outside the sandbox, on a Unix
 * socket bound into it; inside, the process has only loopback, so this is its one way out. HTTPS goes through
 * CONNECT (the proxy sees host and port, never the content), plain HTTP as absolute-form requests; every request
 * is decided on its `host:port` against the rules and the decision is reported, allowed or refused.
 *
 * Hand-written on node:http rather than taken from a package: node:http does the parsing (the part hostile input
 * attacks), and what remains is the decision, its log line and a 403 that names the rule. The proxies on npm
 * (`proxy`, `proxy-chain`) decide through an authentication hook that answers 407, or bring upstream chaining and
 * a TCP listener tack does not want next to a sandbox.
 */

export interface ProxyDecision {
  allowed: boolean;
  /** `CONNECT`, or the HTTP method of a plain request. */
  method: string;
  /** `host:port` as asked (lower case). */
  target: string;
  /** The allow rule that matched, with where it was written. */
  rule?: string;
  /** In words, for the log and the 403 body. */
  reason: string;
}

export interface EgressProxy {
  readonly socketPath: string;
  /** Every decision so far, oldest first (the last 1000). */
  readonly decisions: readonly ProxyDecision[];
  close(): Promise<void>;
}

export interface EgressProxyOptions {
  rules: readonly SandboxNetworkRule[];
  socketPath: string;
  /** Where the network rule was written, for refusals: `mcpServers.web.sandbox.network (tack.json)`. */
  origin: string;
  onDecision?: (decision: ProxyDecision) => void;
  /** Allowed, but the upstream could not be reached (or broke): worth a line in the log too. */
  onUpstreamError?: (target: string, message: string) => void;
  /** How long an upstream may take to accept the connection (default 30 s). */
  connectTimeoutMs?: number;
}

const HOP_BY_HOP = new Set([
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);
const MAX_DECISIONS = 1000;

export function startEgressProxy(options: EgressProxyOptions): Promise<EgressProxy> {
  const decisions: ProxyDecision[] = [];
  const sockets = new Set<Socket>();
  const decide = (method: string, host: string, port: number): ProxyDecision => {
    const target = `${host}:${port}`;
    const rule = options.rules.find((r) => matches(r, host, port));
    const decision: ProxyDecision = rule
      ? {
          allowed: true,
          method,
          target,
          rule: `${rule.written} (${rule.origin})`,
          reason: `allowed by ${rule.written} (${rule.origin})`,
        }
      : { allowed: false, method, target, reason: `${target} is not in the allow-list (${options.origin})` };
    return record(decision);
  };
  const record = (decision: ProxyDecision): ProxyDecision => {
    decisions.push(decision);
    if (decisions.length > MAX_DECISIONS) decisions.shift();
    options.onDecision?.(decision);
    return decision;
  };
  const upstreamError = (target: string, error: Error) =>
    options.onUpstreamError?.(target, (error as NodeJS.ErrnoException).code ?? error.message);

  const server = createServer((req, res) => {
    const method = req.method ?? 'GET';
    const url = absoluteHttpUrl(req.url);
    if (!url) {
      res.writeHead(400, { 'content-type': 'text/plain' });
      res.end('tack sandbox proxy: expected an absolute http:// URL (use CONNECT for https)\n');
      return;
    }
    const host = normalizeHost(url.hostname);
    const port = Number(url.port || 80);
    const decision = decide(method, host, port);
    if (!decision.allowed) {
      res.writeHead(403, { 'content-type': 'text/plain' });
      res.end(`tack sandbox proxy: ${decision.reason}\n`);
      return;
    }
    const headers = forwardable(req.headers);
    // The URL says where the request goes; a different Host header could reach another site on a shared host.
    headers.host = url.host;
    const upstream = request(
      {
        host: bare(host),
        port,
        method,
        path: `${url.pathname}${url.search}`,
        headers,
        timeout: options.connectTimeoutMs ?? 30_000,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, forwardable(answer.headers));
        answer.pipe(res);
      },
    );
    upstream.on('timeout', () => upstream.destroy(new Error('upstream timed out')));
    upstream.on('error', (error) => {
      upstreamError(decision.target, error);
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`tack sandbox proxy: ${decision.target} could not be reached\n`);
    });
    req.pipe(upstream);
  });

  server.on('connect', (req, client: Socket, head: Buffer) => {
    sockets.add(client);
    client.once('close', () => sockets.delete(client));
    client.on('error', () => client.destroy());
    const target = parseAuthority(req.url ?? '');
    if (!target) {
      client.end(
        'HTTP/1.1 400 Bad Request\r\ncontent-type: text/plain\r\n\r\ntack sandbox proxy: expected CONNECT host:port\n',
      );
      return;
    }
    const decision = decide('CONNECT', target.host, target.port);
    if (!decision.allowed) {
      client.end(
        `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\ntack sandbox proxy: ${decision.reason}\n`,
      );
      return;
    }
    const upstream = connect({ host: bare(target.host), port: target.port });
    sockets.add(upstream);
    upstream.once('close', () => sockets.delete(upstream));
    upstream.setTimeout(options.connectTimeoutMs ?? 30_000, () =>
      upstream.destroy(new Error('upstream timed out')),
    );
    let established = false;
    upstream.once('connect', () => {
      established = true;
      upstream.setTimeout(0);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', (error) => {
      upstreamError(decision.target, error);
      if (!established && client.writable)
        client.end('HTTP/1.1 502 Bad Gateway\r\ncontent-type: text/plain\r\n\r\n');
      else client.destroy();
    });
    client.once('close', () => upstream.destroy());
  });
  // Upgrades over plain HTTP (WebSocket) would bypass the request path above: refused, and said so.
  server.on('upgrade', (req, client: Socket) => {
    const url = absoluteHttpUrl(req.url);
    const decision = record({
      allowed: false,
      method: `${req.method ?? 'GET'} (upgrade)`,
      target: url ? `${normalizeHost(url.hostname)}:${url.port || 80}` : '?',
      reason: 'upgrades over plain HTTP are not supported; use https (CONNECT)',
    });
    client.end(
      `HTTP/1.1 403 Forbidden\r\ncontent-type: text/plain\r\n\r\ntack sandbox proxy: ${decision.reason}\n`,
    );
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    else socket.destroy();
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });

  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.socketPath, () => {
      server.off('error', reject);
      // The proxy lives as long as its process; it must not keep tack running if nobody closes it.
      server.unref();
      resolve({
        socketPath: options.socketPath,
        decisions,
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy();
            server.close(() => done());
          }),
      });
    });
  });
}

/** Whether a rule allows `host:port`; `*.example.com` covers subdomains, not example.com itself. */
export function matches(rule: SandboxNetworkRule, host: string, port: number): boolean {
  if (rule.port !== port) return false;
  return rule.subdomains ? host.endsWith(`.${rule.host}`) : host === rule.host;
}

/** A CONNECT target: `host:port` or `[v6]:port`; anything else (userinfo, paths, spaces) is refused. */
export function parseAuthority(authority: string): { host: string; port: number } | undefined {
  const match = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/.exec(authority);
  if (!match) return undefined;
  const port = Number(match[2]);
  if (port < 1 || port > 65535) return undefined;
  return { host: normalizeHost(match[1]!), port };
}

function absoluteHttpUrl(raw: string | undefined): URL | undefined {
  if (!raw || !/^http:\/\//i.test(raw)) return undefined;
  try {
    const url = new URL(raw);
    return url.protocol === 'http:' && url.username === '' && url.password === '' ? url : undefined;
  } catch {
    return undefined;
  }
}

function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}

/** `[::1]` -> `::1` for connecting. */
function bare(host: string): string {
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

function forwardable(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined && !HOP_BY_HOP.has(name)) out[name] = value;
  return out;
}
