import type { CallToolResult } from '@modelcontextprotocol/client';
import { ProtocolError, ProtocolErrorCode, ResourceNotFoundError } from '@modelcontextprotocol/server';
import { errorMessage, TackError } from '../../errors.js';

/** Reserved `_meta` keys describe the upstream link (its server info), not this gateway's answer. */
export function withoutReservedMeta<T extends { _meta?: Record<string, unknown> | undefined }>(result: T): T {
  if (!result._meta) return result;
  const meta = Object.fromEntries(
    Object.entries(result._meta).filter(([key]) => !key.startsWith('io.modelcontextprotocol/')),
  );
  const { _meta: _, ...rest } = result;
  return (Object.keys(meta).length ? { ...rest, _meta: meta } : rest) as T;
}

/** What the downstream model reads when an upstream fails: which server, what happened, what to try. */
export function upstreamFailure(server: string, message: string, hint: string | undefined): CallToolResult {
  const text = `Upstream server "${server}" failed: ${message}${hint ? ` (${hint})` : ''}`;
  return { isError: true, content: [{ type: 'text', text }] };
}

/** Whether the upstream itself answered with a JSON-RPC error (its answer, to pass on as one). */
export function answeredWithError(error: unknown): boolean {
  return TackError.isInstance(error) && error.cause instanceof ProtocolError;
}

/** A failure as a JSON-RPC error: the upstream's own code when it answered with one; the message names it. */
export function wireError(error: unknown, uri?: string): ProtocolError {
  if (error instanceof ProtocolError) return error; // the gateway's own, already worded for the client
  const cause = TackError.isInstance(error) ? error.cause : undefined;
  if (cause instanceof ProtocolError) return new ProtocolError(cause.code, errorMessage(error), cause.data);
  if (TackError.isInstance(error) && error.code === 'UNKNOWN_RESOURCE') {
    return uri
      ? new ResourceNotFoundError(uri, error.message)
      : new ProtocolError(ProtocolErrorCode.ResourceNotFound, error.message);
  }
  return new ProtocolError(ProtocolErrorCode.InternalError, errorMessage(error));
}
