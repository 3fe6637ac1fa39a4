import { VERSION } from '../version.js';
import { loadApi, registered, tracing } from './api.js';
import { MAX_ATTRIBUTE_CHARS } from './spans.js';

/** The variable that turns export on (the OpenTelemetry SDK's own name); without it nothing is loaded. */
export const OTLP_ENDPOINT_ENV = 'OTEL_EXPORTER_OTLP_ENDPOINT';

/** The OpenTelemetry SDK tack started (or nothing): `shutdown` flushes and stops it. */
export interface Telemetry {
  /** Sends what is buffered and stops the exporters (a drain's last step). */
  shutdown(): Promise<void>;
}

const NONE: Telemetry = { shutdown: async () => {} };

/**
 * The official OpenTelemetry SDK, exporting traces and metrics over OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT (the
 * exporters read the standard OTEL_* variables themselves: headers, per-signal endpoints, timeouts), registered as
 * the process's tracer and meter providers. Without the variable nothing is imported, not even the API, and every
 * span of tack (spans.ts) costs one property read. Started by `tack serve`, `tack run` and `tack chat`.
 *
 * When the application has registered a tracer provider of its own, that one stays and gets tack's spans: nothing
 * is started here. `shutdown` flushes, stops the exporters and unregisters the providers, so a later start (a
 * second gateway in the same process) registers afresh.
 */
export async function startTelemetry(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<Telemetry> {
  if (
    !env[OTLP_ENDPOINT_ENV] &&
    !env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT &&
    !env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT
  )
    return NONE;
  const [
    { NodeTracerProvider, BatchSpanProcessor },
    { OTLPTraceExporter },
    { OTLPMetricExporter },
    { MeterProvider, PeriodicExportingMetricReader },
    { resourceFromAttributes },
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/exporter-metrics-otlp-http'),
    import('@opentelemetry/sdk-metrics'),
    import('@opentelemetry/resources'),
  ]).catch((error: unknown) => {
    throw missingSdk(error);
  });
  // Checked after the imports, with no wait before register(): of two starts at once, the second finds the first's.
  if (tracing()) return NONE;
  const api = loadApi();
  // What the application registered already (a context manager, a propagator, a meter provider) stays its own:
  // register() leaves those in place, and shutdown must not remove them.
  const before = { ...registered() };
  const resource = resourceFromAttributes({
    'service.name': env.OTEL_SERVICE_NAME ?? 'tack',
    'service.version': VERSION,
  });
  const tracer = new NodeTracerProvider({
    resource,
    // The SDK's default is no limit: an attribute the AI SDK copies from a provider's answer (a response id, provider
    // metadata) could swell a batch past what the collector takes. The standard variables still choose.
    spanLimits: { attributeValueLengthLimit: attributeLimit(env) },
    spanProcessors: [
      new BatchSpanProcessor(
        new OTLPTraceExporter({
          url: signalUrl(env, 'TRACES', 'traces'),
          timeoutMillis: signalTimeout(env, 'TRACES'),
        }),
      ),
    ],
  });
  tracer.register();
  const meter = new MeterProvider({
    resource,
    readers: [
      new PeriodicExportingMetricReader({
        exporter: new OTLPMetricExporter({
          url: signalUrl(env, 'METRICS', 'metrics'),
          timeoutMillis: signalTimeout(env, 'METRICS'),
        }),
        exportIntervalMillis: 10_000,
      }),
    ],
  });
  const ownMetrics = api.metrics.setGlobalMeterProvider(meter);
  return {
    shutdown: async () => {
      await Promise.allSettled([tracer.shutdown(), meter.shutdown()]);
      // Only what this start put in the API's global registry.
      api.trace.disable();
      if (!before.context) api.context.disable();
      if (!before.propagation) api.propagation.disable();
      if (ownMetrics) api.metrics.disable();
    },
  };
}

/** The OpenTelemetry SDK packages: optional (peer) dependencies, installed by those who export. */
export const OTEL_SDK_PACKAGES = [
  '@opentelemetry/sdk-trace-node',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/exporter-metrics-otlp-http',
  '@opentelemetry/sdk-metrics',
  '@opentelemetry/resources',
] as const;

/**
 * A missing SDK package as an error that says which variable asked for export and how to install the SDK: export
 * was asked for, so going on without it would lose every span unnoticed.
 */
function missingSdk(error: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code !== 'ERR_MODULE_NOT_FOUND') return error;
  const name = /Cannot find (?:package|module) '([^']+)'/.exec(
    error instanceof Error ? error.message : '',
  )?.[1];
  return new Error(
    `OpenTelemetry export is on (an OTEL_EXPORTER_OTLP_*ENDPOINT variable is set) but the SDK is not installed` +
      `${name ? ` (${name} is missing)` : ''}. Install it beside tack: npm install ${OTEL_SDK_PACKAGES.join(' ')}` +
      ' (or unset the variable).',
    { cause: error },
  );
}

/**
 * A signal's export timeout from the given variables (per signal, else OTEL_EXPORTER_OTLP_TIMEOUT), else undefined
 * for the exporter's own (10 s). It bounds what a collector that never answers adds to a shutdown.
 */
function signalTimeout(
  env: Readonly<Record<string, string | undefined>>,
  signal: 'TRACES' | 'METRICS',
): number | undefined {
  for (const name of [`OTEL_EXPORTER_OTLP_${signal}_TIMEOUT`, 'OTEL_EXPORTER_OTLP_TIMEOUT']) {
    const value = Number(env[name]);
    if (env[name] && Number.isFinite(value) && value > 0) return value;
  }
  return undefined;
}

/** OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT, else OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT, else tack's own bound. */
function attributeLimit(env: Readonly<Record<string, string | undefined>>): number {
  for (const name of ['OTEL_SPAN_ATTRIBUTE_VALUE_LENGTH_LIMIT', 'OTEL_ATTRIBUTE_VALUE_LENGTH_LIMIT']) {
    const value = Number(env[name]);
    if (env[name] && Number.isInteger(value) && value >= 0) return value;
  }
  return MAX_ATTRIBUTE_CHARS;
}

/**
 * A signal's URL from the given variables (the exporters would read process.env only): the per-signal endpoint
 * as given, else the base endpoint with /v1/<signal> appended, as the OTLP/HTTP specification says.
 */
function signalUrl(
  env: Readonly<Record<string, string | undefined>>,
  signal: 'TRACES' | 'METRICS',
  path: string,
): string | undefined {
  const own = env[`OTEL_EXPORTER_OTLP_${signal}_ENDPOINT`];
  if (own) return own;
  const base = env[OTLP_ENDPOINT_ENV];
  return base ? `${base.replace(/\/+$/, '')}/v1/${path}` : undefined;
}
