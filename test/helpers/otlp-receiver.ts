import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A span as the exporters' OTLP/HTTP JSON encoding carries it, its attributes decoded to plain values. */
export interface ReceivedSpan {
  name: string;
  /** OTLP's enum: 1 internal, 2 server, 3 client. */
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  /** The instrumentation scope (tack's tracer is `tack`). */
  scope: string;
  attributes: Record<string, unknown>;
  status?: { code?: number; message?: string };
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it. */
  endpoint: string;
  spans(): ReceivedSpan[];
  /** Everything received, as text (to check what must never be exported). */
  everything(): string;
  /** The bodies received at /v1/metrics. */
  metrics(): unknown[];
  close(): Promise<void>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: number | string;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}

interface OtlpSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  attributes?: Array<{ key: string; value: OtlpValue }>;
  status?: { code?: number; message?: string };
}

interface TracesBody {
  resourceSpans?: Array<{ scopeSpans?: Array<{ scope?: { name?: string }; spans?: OtlpSpan[] }> }>;
}

function decode(value: OtlpValue): unknown {
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(decode);
  if (value.intValue !== undefined) return Number(value.intValue);
  return value.stringValue ?? value.doubleValue ?? value.boolValue;
}

/**
 * A local OTLP/HTTP receiver on 127.0.0.1, as a collector would receive the exporters' JSON: it keeps what arrives
 * at /v1/traces and /v1/metrics and answers 200.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const received: Record<string, unknown[]> = { '/v1/traces': [], '/v1/metrics': [] };
  const texts: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      texts.push(body);
      try {
        received[req.url ?? '']?.push(JSON.parse(body));
      } catch {
        received[req.url ?? '']?.push({ unparsable: body.slice(0, 200) });
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans: () =>
      (received['/v1/traces'] as TracesBody[]).flatMap((body) =>
        (body.resourceSpans ?? []).flatMap((r) =>
          (r.scopeSpans ?? []).flatMap((s) =>
            (s.spans ?? []).map((span) => ({
              name: span.name,
              kind: span.kind,
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              scope: s.scope?.name ?? '',
              attributes: Object.fromEntries((span.attributes ?? []).map((a) => [a.key, decode(a.value)])),
              ...(span.status ? { status: span.status } : {}),
            })),
          ),
        ),
      ),
    everything: () => texts.join('\n'),
    metrics: () => received['/v1/metrics']!,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
