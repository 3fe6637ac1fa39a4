import { depthRefusalError, jsonTextDepth } from '../../util/json-depth.js';

/**
 * A POST whose JSON nests deeper than `limit` (limits.jsonDepth) is answered with a JSON-RPC error before the
 * SDK or a tool handler walks it: JSON.parse copes with any depth, but JSON.stringify (forwarding upstream, the
 * audit log) overflows the stack at a few thousand levels, and an overflow inside the gateway's call path once
 * took the upstream connection down for every client. The body's text is measured in one pass, before it is
 * parsed (serving/http-entry.ts reads it once for every check). Undefined lets the request through.
 */
export function depthRefusal(
  text: string,
  limit: number,
): { status: number; body: Record<string, unknown> } | undefined {
  if (jsonTextDepth(text, limit) <= limit) return undefined;
  return {
    status: 400,
    body: { jsonrpc: '2.0', id: idOf(text), error: depthRefusalError(limit) },
  };
}

/** The request's id, for its error: JSON.parse is iterative, so it is safe on the deepest body. */
function idOf(text: string): string | number | null {
  try {
    const id = (JSON.parse(text) as { id?: unknown }).id;
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}
