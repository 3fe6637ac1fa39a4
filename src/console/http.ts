import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { TackError } from '../errors.js';

/**
 * The console's own pages and scripts: only files shipped with tack, no inline script or style, nothing from
 * elsewhere. Tool descriptions, transcripts and concept bodies are someone else's text: even if one reached the
 * DOM as markup, it could neither run a script nor load anything. The only frames are MCP App views, through the
 * sandbox proxy on its own origin (sandbox.ts), with a policy of their own (apps.ts).
 */
export function consoleCsp(sandboxOrigin: string | undefined): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    `frame-src ${sandboxOrigin ?? "'none'"}`,
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every answer carries: no sniffing, no referrer (the page URL holds the token), no caching of data. */
export const COMMON_HEADERS: Record<string, string> = {
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cross-origin-resource-policy': 'same-origin',
};

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...COMMON_HEADERS,
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

/** An error as the front end shows it: its code, message and hint, never a stack. */
export function sendError(res: ServerResponse, error: unknown): void {
  if (TackError.isInstance(error)) {
    const status =
      error.code === 'USAGE' || error.code === 'LIMIT_EXCEEDED'
        ? 400
        : error.code.startsWith('UNKNOWN_') || error.code === 'SESSION'
          ? 404
          : 500;
    sendJson(res, status, {
      error: { code: error.code, message: error.message, hint: error.hint, details: error.details },
    });
    return;
  }
  sendJson(res, 500, { error: { code: 'INTERNAL', message: (error as Error)?.message ?? String(error) } });
}

/** The largest request body the API reads: arguments of a tool call, an approval. */
export const MAX_BODY_BYTES = 1024 * 1024;

export async function readJsonBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY_BYTES)
      throw new TackError('LIMIT_EXCEEDED', `request body over ${MAX_BODY_BYTES} bytes`, {
        hint: 'Send smaller arguments.',
      });
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new TackError('USAGE', `request body is not JSON: ${(error as Error).message}`);
  }
}

/**
 * Compares a presented token with the session's, in constant time over digests, so neither the token nor its
 * length shows in the timing (as `tack serve --http` compares bearer tokens).
 */
export function tokenMatcher(token: string): (given: string | undefined) => boolean {
  const sha256 = (value: string) => createHash('sha256').update(value).digest();
  const expected = sha256(token);
  return (given) => given !== undefined && timingSafeEqual(sha256(given), expected);
}

export function bearerOf(req: IncomingMessage): string | undefined {
  return /^bearer\s+(.*)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
}
