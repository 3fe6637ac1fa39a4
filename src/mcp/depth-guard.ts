import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { depthRefusalError, jsonDepth } from '../util/json-depth.js';
import { interceptOnMessage } from './sdk-internals.js';

/** JSON-RPC's "Internal error": what the request gets instead of a result tack refused to take in. */
const INTERNAL_ERROR = -32603;

/** Marks the error a refused answer becomes, so the request's failure names the limit (failures.ts). */
export const DEPTH_LIMIT_MARK = 'tack.jsonDepth';

/**
 * Puts a depth check (and the order of what arrives) between `transport` and the SDK instance that reads it (a
 * client, or `tack serve` on stdio with `peer` 'client'): a message nested deeper than
 * `limit` (limits.jsonDepth, counted over the whole JSON-RPC message) never reaches the SDK's schemas or
 * anything else that recurses. A response becomes a JSON-RPC error for its request, a request from the server
 * is answered with one, a notification is dropped; `note` says which, for the server's log. The connection
 * itself is untouched: one hostile answer fails one request.
 * The check sits in front of the SDK's handler through interceptOnMessage (sdk-internals.ts).
 */
export function guardIncoming(
  transport: Transport,
  limit: number,
  note: (message: string) => void,
  peer: 'server' | 'client' = 'server',
): void {
  interceptOnMessage(transport, (message, extra, handler) => {
    if (jsonDepth(message, limit) <= limit) {
      // The SDK runs a notification's handler on a microtask but settles a response at once: a last progress
      // notification arriving in one chunk with the response after it found its request gone ("unknown token")
      // and never reached the client. A response taken on a microtask too keeps the order the server sent.
      if (isResponse(message)) queueMicrotask(() => handler()?.(message, extra));
      else handler()?.(message, extra);
      return;
    }
    const id = (message as { id?: unknown }).id;
    const method = (message as { method?: unknown }).method;
    const what = `nested deeper than ${limit} levels (limits.jsonDepth)`;
    if (typeof method === 'string' && (typeof id === 'string' || typeof id === 'number')) {
      note(`refused a ${method} request from the ${peer}: ${what}`);
      void transport.send({ jsonrpc: '2.0', id, error: depthRefusalError(limit) }).catch(() => {});
    } else if (typeof method === 'string') {
      note(`dropped a ${method} notification from the ${peer}: ${what}`);
    } else if (typeof id === 'string' || typeof id === 'number') {
      note(`refused the answer to request ${id}: ${what}`);
      const refused: JSONRPCMessage = {
        jsonrpc: '2.0',
        id,
        error: {
          code: INTERNAL_ERROR,
          message: `the ${peer}'s answer is ${what}`,
          data: { [DEPTH_LIMIT_MARK]: limit },
        },
      };
      handler()?.(refused, extra);
    } else note(`dropped a message without id or method: ${what}`);
  });
}

function isResponse(message: JSONRPCMessage): boolean {
  return !('method' in message) && 'id' in message;
}
