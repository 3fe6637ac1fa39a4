import { DEFAULT_MAX_REQUEST_BODY_SIZE, readRequestBody } from '@modelcontextprotocol/server';
import { jsonTextDepth } from '../../util/json-depth.js';

const INVALID_REQUEST = -32600;

/**
 * A POST whose JSON nests deeper than `limit` (limits.jsonDepth) is answered here with a JSON-RPC error, before
 * the SDK or a tool handler walks it: JSON.parse copes with any depth, but JSON.stringify (forwarding upstream,
 * the audit log) overflows the stack at a few thousand levels, and an overflow inside the gateway's call path
 * once took the upstream connection down for every client. The body is measured in one pass over its text, on
 * a clone, so the SDK still reads the request as it came; a body over the SDK's size limit is left to the SDK,
 * which answers it 413. Undefined lets the request through.
 */
export function depthCheck(limit: number): (request: Request) => Promise<Response | undefined> {
  return async (request) => {
    if (request.method !== 'POST' || request.body === null) return undefined;
    const read = await readRequestBody(request.clone(), DEFAULT_MAX_REQUEST_BODY_SIZE);
    if (read.tooLarge || jsonTextDepth(read.text, limit) <= limit) return undefined;
    return Response.json(
      {
        jsonrpc: '2.0',
        id: idOf(read.text),
        error: {
          code: INVALID_REQUEST,
          message: `Invalid Request: JSON nested deeper than ${limit} levels (limits.jsonDepth)`,
        },
      },
      { status: 400 },
    );
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
