import { APICallError, RetryError } from 'ai';
import { errorMessage } from '../errors.js';
import { type ResolvedModel, resolveModel } from './model.js';
import type { Price } from './prices.js';

/** A model a step may run on, with the price its steps are counted at (undefined: unknown, counted as 0). */
export interface ModelChoice {
  model: ResolvedModel;
  price: Price | undefined;
}

/** Anthropic's error types, when one arrives inside a stream that had already started (no HTTP status then). */
const STREAM_ERRORS: Readonly<Record<string, string>> = {
  overloaded_error: 'overloaded',
  rate_limit_error: 'rate limited',
  api_error: 'server error',
  timeout_error: 'timed out',
};

/**
 * Why a failed model call may go to the next model of `agent.fallback`, in words; undefined when it must not.
 * Only failures of the provider rather than of the request qualify: overload (529), a rate limit (429) or a
 * timeout (408) that outlasted the retries, a server error (5xx), no connection at all. A bad request (400), a
 * key refused (401, 403), a model not found (404), a request too large (413) or a content-policy rejection would
 * fail the same way on another model or hide a mistake the user must fix; a refusal is an answer, not an error.
 */
export function fallbackReason(error: unknown): string | undefined {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (APICallError.isInstance(cause)) {
    const status = cause.statusCode;
    const said = cut(cause.message);
    if (status === undefined) return cause.isRetryable ? `no connection (${said})` : undefined;
    const what =
      status === 529
        ? 'overloaded'
        : status === 429
          ? 'rate limited'
          : status === 408
            ? 'timed out'
            : status >= 500
              ? 'server error'
              : undefined;
    return what && `${what} (${status}: ${said})`;
  }
  if (typeof cause === 'object' && cause !== null && 'type' in cause && typeof cause.type === 'string') {
    const what = STREAM_ERRORS[cause.type];
    const message = 'message' in cause && typeof cause.message === 'string' ? cause.message : cause.type;
    return what && `${what} (${cut(message)})`;
  }
  return undefined;
}

function cut(text: string): string {
  return text.length > 160 ? `${text.slice(0, 159)}…` : text;
}

/**
 * The models of `agent.fallback` (or `--fallback`), resolved in order. One that cannot be made (an unknown
 * provider, a key not set) is left out with a notice rather than stopping a session whose own model works.
 */
export function resolveFallbacks(
  specs: readonly string[] | undefined,
  primary: ResolvedModel,
  env: Readonly<Record<string, string | undefined>>,
): { models: ResolvedModel[]; notices: string[] } {
  const models: ResolvedModel[] = [];
  const notices: string[] = [];
  for (const spec of specs ?? []) {
    if (spec === primary.spec || models.some((m) => m.spec === spec)) continue;
    try {
      models.push(resolveModel(spec, env));
    } catch (error) {
      notices.push(`fallback model ${spec} left out: ${errorMessage(error)}`);
    }
  }
  return { models, notices };
}
