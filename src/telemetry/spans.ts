import type { Tracer } from '@opentelemetry/api';
import { VERSION } from '../version.js';
import { type OtelApi, tracing } from './api.js';

/** Attribute values as OpenTelemetry takes them; undefined ones are left out. */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** What the code inside a span may do to it; nothing at all when tracing is off. */
export interface SpanHandle {
  set(attributes: SpanAttributes): void;
  /** An error status with `error.type` (a code or a class name: never a message, which may quote arguments). */
  fail(errorType: string): void;
}

export type SpanKindName = 'internal' | 'server' | 'client';

const KINDS: Record<SpanKindName, number> = { internal: 0, server: 1, client: 2 };

const NO_SPAN: SpanHandle = { set: () => {}, fail: () => {} };

function tracerOf(api: typeof OtelApi): Tracer {
  return api.trace.getTracer('tack', VERSION);
}

/**
 * Runs `work` inside a span named `name`, the span active for everything `work` starts (so a step's model call
 * and tool calls, and the AI SDK's own spans, become its children). An exception sets an error status with
 * `error.type` and goes on. Without a registered tracer provider `work` runs as it is, with a handle that does
 * nothing: the cost is one property read.
 */
export function inSpan<T>(
  name: string,
  options: { kind?: SpanKindName; attributes?: SpanAttributes },
  work: (span: SpanHandle) => Promise<T>,
): Promise<T> {
  const api = tracing();
  if (!api) return work(NO_SPAN);
  return tracerOf(api).startActiveSpan(
    name,
    { kind: KINDS[options.kind ?? 'internal'], attributes: defined(options.attributes ?? {}) },
    async (span) => {
      let failed = false;
      const handle: SpanHandle = {
        set: (attributes) => span.setAttributes(defined(attributes)),
        fail: (errorType) => {
          failed = true;
          span.setAttribute('error.type', errorType);
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: errorType });
        },
      };
      try {
        return await work(handle);
      } catch (error) {
        if (!failed) handle.fail(errorTypeOf(error));
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/**
 * The AI SDK's `experimental_telemetry` for a model call: on, into tack's tracer, when a tracer provider is
 * registered; prompts, messages, tool arguments and answers are never recorded (they may hold secrets).
 */
export function aiTelemetry(functionId: string): {
  isEnabled: boolean;
  tracer?: Tracer;
  functionId: string;
  recordInputs: false;
  recordOutputs: false;
} {
  const api = tracing();
  return {
    isEnabled: api !== undefined,
    ...(api ? { tracer: tracerOf(api) } : {}),
    functionId,
    recordInputs: false,
    recordOutputs: false,
  };
}

/** `error.type` for a thrown value: tack's error code, else the class name. */
export function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  return error instanceof Error ? error.name : '_OTHER';
}

function defined(attributes: SpanAttributes): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [key, value] of Object.entries(attributes)) if (value !== undefined) out[key] = value;
  return out;
}
