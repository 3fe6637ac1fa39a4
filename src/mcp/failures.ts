import {
  ProtocolError,
  SdkError,
  SdkErrorCode,
  SdkHttpError,
  UnauthorizedError,
} from '@modelcontextprotocol/client';
import { errorMessage, TackError } from '../errors.js';
import { DEPTH_LIMIT_MARK } from './depth-guard.js';

/** What a request was, for wording its failure: `tools/call` of a tool, a resource read, a prompt. */
export interface RequestContext {
  server: string;
  what: string;
  tool?: string;
  uri?: string;
  timeoutMs: number;
  /** The server's last stderr lines as error details, quoted when the failure looks like the server's doing. */
  stderr: () => string[];
  /** Why the connection closed, when the host knows better than the SDK (a process exit, a transport error). */
  reason?: string | undefined;
}

export type FailureKind = 'protocol' | 'timeout' | 'aborted' | 'closed' | 'transport';

/**
 * Sorts a failed request into the two error channels the host keeps apart: a JSON-RPC error the server
 * answered (the request reached it and was refused) versus a connection that broke (the server is gone and
 * must be restarted). `isError` tool results are not failures at all and never reach this function.
 */
export function classifyFailure(error: unknown): FailureKind {
  if (error instanceof ProtocolError) return 'protocol';
  // A stack overflow or an impossible string length comes from this side, on this request's data (serializing
  // it, or reading its answer): the request failed, the link did not.
  if (error instanceof RangeError) return 'protocol';
  // A refused or missing login is an answer as well: reconnecting would only meet the same 401.
  if (error instanceof UnauthorizedError || isOAuthFailure(error)) return 'protocol';
  // An HTTP status is an answer: the server is up. Only a lost session (404) calls for a new connection.
  if (error instanceof SdkHttpError) {
    if (error.status === 404) return 'transport';
    if (error.code === SdkErrorCode.ClientHttpFailedToOpenStream) return 'transport';
    return 'protocol';
  }
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.RequestTimeout) return 'timeout';
    if (error.code === SdkErrorCode.ConnectionClosed || error.code === SdkErrorCode.NotConnected)
      return 'closed';
    if (error.code === SdkErrorCode.SendFailed) return 'transport';
    // Everything else the SDK raises locally (too many input_required rounds, a result of an unsupported
    // type, a missing capability, output that fails its schema) is this request's failure, not the link's.
    return 'protocol';
  }
  if (error instanceof Error && (error.name === 'AbortError' || /aborted/i.test(error.message)))
    return 'aborted';
  // fetch's TypeError ("fetch failed": refused, reset, DNS) and socket errors: the link itself.
  return 'transport';
}

/** What to check when the server refused a request: the tool's schema, the prompt's arguments, the URI. */
function refusedHint(ctx: RequestContext): string {
  if (ctx.tool !== undefined)
    return 'The server refused the request; check the arguments against the tool schema (`tack tools`).';
  if (ctx.uri !== undefined)
    return `The server refused the request; check the URI against what it lists (\`tack resources --server ${ctx.server}\`).`;
  return `The server refused the request; check the prompt's name and arguments (\`tack prompts --server ${ctx.server}\`).`;
}

export function requestFailure(error: unknown, ctx: RequestContext): TackError {
  if (isOAuthFailure(error)) return error; // already names the server and says to run `tack auth`
  const subject = { server: ctx.server, tool: ctx.tool, uri: ctx.uri };
  const limit = depthLimitOf(error);
  if (limit !== undefined)
    return new TackError(
      'LIMIT_EXCEEDED',
      `${ctx.what} on server "${ctx.server}": the answer is nested deeper than ${limit} levels (limits.jsonDepth); tack refused it`,
      {
        subject,
        hint: 'The server sent a result no honest tool needs; raise limits.jsonDepth in tack.json only if you trust it.',
        cause: error,
      },
    );
  const kind = classifyFailure(error);
  switch (kind) {
    case 'protocol': {
      const status = error instanceof SdkHttpError ? error.status : undefined;
      const hint =
        error instanceof UnauthorizedError
          ? `The server wants a login: run \`tack auth ${ctx.server}\`.`
          : status === 401 || status === 403
            ? `The server refused the credentials; check mcpServers.${ctx.server}.headers and the variables they use.`
            : status !== undefined
              ? 'The server answered with an HTTP error; its own logs say why.'
              : refusedHint(ctx);
      const message = `${ctx.what} on server "${ctx.server}" failed: ${errorMessage(error)}`;
      return new TackError('REQUEST_FAILED', message, { subject, hint, cause: error });
    }
    case 'timeout':
      return new TackError(
        'REQUEST_TIMEOUT',
        `${ctx.what} on server "${ctx.server}" timed out after ${ctx.timeoutMs} ms without progress`,
        { subject, hint: `Raise mcpServers.${ctx.server}.callTimeoutMs if the tool is slow.`, cause: error },
      );
    case 'aborted':
      return new TackError('REQUEST_ABORTED', `${ctx.what} on server "${ctx.server}" was cancelled`, {
        subject,
        cause: error,
      });
    case 'closed': {
      const message =
        ctx.reason === undefined
          ? `server "${ctx.server}" closed the connection during ${ctx.what}: ${errorMessage(error)}`
          : `server "${ctx.server}" ${ctx.reason} during ${ctx.what}`;
      return new TackError('SERVER_CRASHED', message, {
        subject,
        hint: 'tack restarts it on the next request; its log has the details (`tack servers`).',
        details: ctx.stderr(),
        cause: error,
      });
    }
    case 'transport':
      return new TackError(
        'SERVER_UNAVAILABLE',
        `server "${ctx.server}" could not be reached for ${ctx.what}: ${errorMessage(error)}`,
        { subject, hint: 'tack reconnects with backoff; check that the server is running.', cause: error },
      );
  }
}

/** A login that is needed and cannot start here (AUTH_REQUIRED), or one that failed (AUTH_FAILED): the one check for both. */
export function isOAuthFailure(error: unknown): error is TackError {
  return TackError.isInstance(error) && (error.code === 'AUTH_REQUIRED' || error.code === 'AUTH_FAILED');
}

/** The depth limit an answer broke, when depth-guard.ts refused it for that reason. */
function depthLimitOf(error: unknown): number | undefined {
  if (!(error instanceof ProtocolError)) return undefined;
  const data = error.data as Record<string, unknown> | undefined;
  const limit = data?.[DEPTH_LIMIT_MARK];
  return typeof limit === 'number' ? limit : undefined;
}
