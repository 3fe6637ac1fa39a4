import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  DEFAULT_MAX_REQUEST_BODY_SIZE,
  isLegacyRequest,
  type McpHttpHandler,
} from '@modelcontextprotocol/server';
import { depthRefusal } from './depth-check.js';
import { type FastPath, offerFastPath } from './fast-path.js';
import type { LegacySessions } from './legacy-sessions.js';

export interface McpEntryOptions {
  /** 2026-07-28 requests (`createMcpHandler`, legacy: 'reject'). */
  modern: McpHttpHandler;
  /** 2025-era clients, in sessions. */
  legacy: LegacySessions;
  /** The deepest JSON a request may carry (limits.jsonDepth). */
  jsonDepth: number;
  /** SEP-2243 header check for a 2026-07-28 request (mcp-param-headers.ts), given the parsed body. */
  paramHeaders?: ((request: Request, message: unknown) => Response | undefined) | undefined;
  /** The common request answered without the SDK's per-request machinery (fast-path.ts). */
  fastPath?: FastPath | undefined;
  /**
   * Awaited before a request goes anywhere (the fast path, the SDK): the gateway reviews a new catalog against
   * the pins first, so what is served and checked below is the reviewed catalog.
   */
  beforeRequest?: (() => Promise<void>) | undefined;
}

/**
 * `/mcp` for Node's http server. A POST body is read once, as bytes, within the SDK's size limit; its depth is
 * measured on the text and it is parsed once. The parsed body then serves every later step: the fast path, the
 * era routing (`isLegacyRequest(request, parsedBody)`), the Mcp-Param check and the SDK itself (`parsedBody`),
 * where each step used to read its own clone of the request. What the SDK serves gets one web `Request`, built
 * from the text already read, and its `Response` is streamed back as `toNodeHandler` does.
 */
export function mcpEntry(
  options: McpEntryOptions,
): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  const serve = async (request: Request, parsed: unknown, peer: string): Promise<Response> => {
    if (await isLegacyRequest(request, parsed)) return options.legacy.serve(request, parsed, peer);
    return (
      options.paramHeaders?.(request, parsed) ??
      options.modern.fetch(request, parsed === undefined ? undefined : { parsedBody: parsed })
    );
  };
  return async (req, res) => {
    if (options.beforeRequest) {
      try {
        await options.beforeRequest();
      } catch {
        // Not fatal here: the handlers review again and fail the request with its own error.
      }
    }
    const post = req.method?.toUpperCase() === 'POST';
    let text: string | undefined;
    let parsed: unknown;
    if (post) {
      const body = await readBody(req, DEFAULT_MAX_REQUEST_BODY_SIZE);
      if (body === 'aborted') return;
      if (body === 'too-large') {
        sendJson(res, 413, tooLarge(DEFAULT_MAX_REQUEST_BODY_SIZE), { connection: 'close' });
        return;
      }
      text = body;
      const refusal = depthRefusal(text, options.jsonDepth);
      if (refusal) {
        sendJson(res, refusal.status, refusal.body);
        return;
      }
      try {
        parsed = text.length === 0 ? undefined : JSON.parse(text);
      } catch {
        parsed = undefined; // not JSON: the SDK's parse error
      }
      if (parsed !== undefined && options.fastPath)
        if (offerFastPath(options.fastPath, req.headers, parsed, res, options.legacy)) return;
    }
    let finished = false;
    const abort = new AbortController();
    res.on('close', () => {
      if (!finished) abort.abort();
    });
    let response: Response;
    try {
      response = await serve(webRequest(req, text, abort.signal), parsed, peerOf(req));
    } catch {
      response = Response.json(
        { jsonrpc: '2.0', error: { code: -32603, message: 'Internal server error' }, id: null },
        { status: 500 },
      );
    }
    await writeResponse(res, response, abort.signal);
    finished = true;
  };
}

/** The body's text, within `max` bytes; `too-large` past it, `aborted` when the client went away. */
function readBody(req: IncomingMessage, max: number): Promise<string | 'too-large' | 'aborted'> {
  if (Number(req.headers['content-length']) > max) return Promise.resolve('too-large');
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        resolve('too-large');
        return;
      }
      chunks.push(chunk);
    });
    req.once('end', () => resolve(Buffer.concat(chunks, size).toString('utf8')));
    req.once('error', () => resolve('aborted'));
    req.once('close', () => {
      if (!req.complete) resolve('aborted');
    });
  });
}

function tooLarge(max: number): Record<string, unknown> {
  return {
    jsonrpc: '2.0',
    error: { code: -32000, message: `Payload Too Large: Request body must not exceed ${max} bytes` },
    id: null,
  };
}

function sendJson(
  res: ServerResponse,
  status: number,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
}

/** The web `Request` the SDK takes, with the body already read (its text, not the parsed value re-encoded). */
/**
 * Who opens a 2025-era session, for fairness when sessions run short (legacy-sessions.ts): the peer's address.
 * Headers such as X-Forwarded-For are the client's own words unless a proxy overwrites them, so they are not
 * taken: behind a reverse proxy every client is that proxy (docs/deploy.md).
 */
function peerOf(req: IncomingMessage): string {
  const address = req.socket.remoteAddress ?? 'unknown';
  // One IPv6 host usually has a whole /64: its addresses are one opener.
  return address.includes(':') && !address.startsWith('::ffff:') ? `${ipv6Prefix64(address)}::/64` : address;
}

/** The first four groups of an IPv6 address, written out (`2001:db8::1` is 2001:db8:0:0). */
function ipv6Prefix64(address: string): string {
  const [head = '', tail] = address.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail === undefined ? [] : tail ? tail.split(':') : [];
  const zeros = Array<string>(Math.max(0, 8 - left.length - right.length)).fill('0');
  return left
    .concat(zeros, right)
    .slice(0, 4)
    .map((g) => g.replace(/^0+(?=.)/, '').toLowerCase())
    .join(':');
}

function webRequest(req: IncomingMessage, text: string | undefined, signal: AbortSignal): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  const method = (req.method ?? 'GET').toUpperCase();
  const withBody = text !== undefined && text.length > 0 && method !== 'GET' && method !== 'HEAD';
  if (withBody) headers.delete('transfer-encoding');
  return new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
    method,
    headers,
    signal,
    ...(withBody ? { body: text } : {}),
  });
}

/** Streams a web `Response` to Node's response, honouring backpressure, until the client goes away. */
async function writeResponse(res: ServerResponse, response: Response, signal: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  if (response.body === null) {
    res.end();
    return;
  }
  let drained: (() => void) | undefined;
  const onDrain = () => {
    drained?.();
    drained = undefined;
  };
  res.on('drain', onDrain);
  const closed = new Promise<void>((resolve) =>
    signal.addEventListener('abort', () => resolve(), { once: true }),
  );
  try {
    for await (const chunk of response.body) {
      if (signal.aborted) break;
      if (!res.write(chunk))
        await Promise.race([
          new Promise<void>((resolve) => {
            drained = resolve;
          }),
          closed,
        ]);
    }
  } catch {
    // the stream failed or the client went away: end what was sent
  }
  res.off('drain', onDrain);
  res.end();
}
