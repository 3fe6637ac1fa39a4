import { tracing } from './api.js';

/**
 * W3C trace context across MCP requests, where the OpenTelemetry MCP semantic conventions carry it: the request's
 * `params._meta` (`traceparent`, `tracestate`). Both directions go through the registered propagator (the W3C one
 * startTelemetry registers, or the application's), and nothing happens when no tracer provider is registered.
 */

/** The keys taken from a client's `_meta`; baggage is not taken, so a client cannot put entries into tack's context. */
const CARRIED = ['traceparent', 'tracestate'] as const;
/** A traceparent is 55 characters; tracestate is at most 32 entries of ~256 (W3C): longer values are not trace context. */
const MAX_VALUE_CHARS = 512;

/** The active span's context as `_meta` keys for an outgoing request, or undefined when not tracing. */
export function traceMeta(): Record<string, string> | undefined {
  const api = tracing();
  if (!api) return undefined;
  const carrier: Record<string, string> = {};
  api.propagation.inject(api.context.active(), carrier);
  return carrier.traceparent ? carrier : undefined;
}

/**
 * Runs `work` as a child of the trace a request's `_meta` names (a client's or a calling host's), when tracing and
 * when the values parse; anything else (absent, malformed, oversized) leaves the context as it is.
 */
export function withRemoteParent<T>(meta: unknown, work: () => T): T {
  const api = tracing();
  if (!api || typeof meta !== 'object' || meta === null) return work();
  const carrier: Record<string, string> = {};
  for (const key of CARRIED) {
    const value = (meta as Record<string, unknown>)[key];
    if (typeof value === 'string' && value.length <= MAX_VALUE_CHARS) carrier[key] = value;
  }
  if (!carrier.traceparent) return work();
  return api.context.with(api.propagation.extract(api.context.active(), carrier), work);
}
