import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';

export type { OtelApi };

/**
 * Where every copy of the OpenTelemetry API 1.x keeps what was registered (its global-utils.ts): a tracer provider
 * under `trace`, a meter provider under `metrics`. Read here without loading the API.
 */
const GLOBAL_KEY = Symbol.for('opentelemetry.js.api.1');

interface Registered {
  trace?: unknown;
  metrics?: unknown;
  context?: unknown;
  propagation?: unknown;
}

let api: typeof OtelApi | undefined;

export function registered(): Registered | undefined {
  return (globalThis as Record<symbol, Registered | undefined>)[GLOBAL_KEY];
}

/** The API module, loaded on first use (synchronously: spans are opened on paths that do not wait). */
export function loadApi(): typeof OtelApi {
  api ??= createRequire(import.meta.url)('@opentelemetry/api') as typeof OtelApi;
  return api;
}

/**
 * The OpenTelemetry API when a tracer provider is registered (by startTelemetry or by the application), else
 * undefined. Asking the API's global registry first means a process that traces nothing never loads the API
 * (~20 ms of start-up for `tack tools` and the other commands whose host would open client spans).
 */
export function tracing(): typeof OtelApi | undefined {
  return registered()?.trace ? loadApi() : undefined;
}

/** The same for metrics: the API when a meter provider is registered. */
export function metering(): typeof OtelApi | undefined {
  return registered()?.metrics ? loadApi() : undefined;
}
