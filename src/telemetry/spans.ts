import type { Exception, Span, SpanStatus, Tracer } from '@opentelemetry/api';
import { VERSION } from '../version.js';
import { type OtelApi, tracing } from './api.js';

/** Attribute values as OpenTelemetry takes them; undefined ones are left out. */
export type SpanAttributes = Record<string, string | number | boolean | string[] | undefined>;

/** What the code inside a span may do to it; nothing at all when tracing is off. */
export interface SpanHandle {
  set(attributes: SpanAttributes): void;
  /** An error status with `error.type` (a code or a class name: never a message, which may quote arguments). */
  fail(errorType: string): void;
  /** The span's outcome in tack's words: anything but `ok` fails it (`tool-error` as the conventions' `tool_error`). */
  outcome(outcome: string): void;
}

export type SpanKindName = 'internal' | 'server' | 'client';

const KINDS: Record<SpanKindName, number> = { internal: 0, server: 1, client: 2 };

const NO_SPAN: SpanHandle = { set: () => {}, fail: () => {}, outcome: () => {} };

/**
 * The longest span name and string attribute tack sets. Names come partly from what others choose (a tool name a
 * hostile upstream or model invents may be megabytes, with control characters): bounded here, so one span cannot
 * swell an export batch past what a collector takes (and lose the batch's other spans). The SDK's own attribute
 * limit (start.ts) bounds the AI SDK's attributes too; span names have no limit there.
 */
export const MAX_SPAN_NAME = 256;
export const MAX_ATTRIBUTE_CHARS = 1024;

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
    bounded(name, MAX_SPAN_NAME),
    { kind: KINDS[options.kind ?? 'internal'], attributes: defined(options.attributes ?? {}) },
    async (span) => {
      let failed = false;
      const handle: SpanHandle = {
        set: (attributes) => span.setAttributes(defined(attributes)),
        fail: (errorType) => {
          failed = true;
          const type = safeErrorType(errorType);
          span.setAttribute('error.type', type);
          span.setStatus({ code: api.SpanStatusCode.ERROR, message: type });
        },
        outcome: (outcome) => {
          if (outcome !== 'ok') handle.fail(outcome === 'tool-error' ? 'tool_error' : outcome);
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
 * registered; prompts, messages, tool arguments and answers are never recorded (they may hold secrets). The tracer
 * is guarded (GuardedTracer): the SDK records a failed call's exception message, stack and status message, and a
 * provider's error message quotes the request often enough ("Invalid 'messages[3].content': ...").
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
    ...(api ? { tracer: guardedTracer(tracerOf(api)) } : {}),
    functionId,
    recordInputs: false,
    recordOutputs: false,
  };
}

/** `error.type` for a thrown value: tack's error code, else the class name. */
export function errorTypeOf(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string' && /^[A-Z_]+$/.test(code)) return code;
  return error instanceof Error ? safeErrorType(error.name) : '_OTHER';
}

/** An error type as exported: an identifier-like word; anything else (a name someone chose freely) is `_OTHER`. */
function safeErrorType(type: unknown): string {
  return typeof type === 'string' && /^[\w.-]{1,64}$/.test(type) ? type : '_OTHER';
}

/** `text` without control characters (a span name or attribute shown in a terminal or a log) and at most `max`. */
function bounded(text: string, max: number): string {
  const clean = text.length > max ? `${text.slice(0, max - 1)}…` : text;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is removed
  return clean.replace(/[\u0000-\u001f\u007f-\u009f]/g, '?');
}

function defined(attributes: SpanAttributes): Record<string, string | number | boolean | string[]> {
  const out: Record<string, string | number | boolean | string[]> = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    if (typeof value === 'string') out[key] = bounded(value, MAX_ATTRIBUTE_CHARS);
    else if (Array.isArray(value)) out[key] = value.slice(0, 32).map((v) => bounded(v, MAX_ATTRIBUTE_CHARS));
    else out[key] = value;
  }
  return out;
}

/**
 * A span as the AI SDK gets it: an exception is recorded by its type only, a status without its message. The SDK
 * otherwise exports the provider's error message (and a stack that repeats it) on two spans per failed call.
 */
class GuardedSpan implements Span {
  readonly #span: Span;

  constructor(span: Span) {
    this.#span = span;
  }

  spanContext() {
    return this.#span.spanContext();
  }
  setAttribute(...args: Parameters<Span['setAttribute']>): this {
    this.#span.setAttribute(...args);
    return this;
  }
  setAttributes(...args: Parameters<Span['setAttributes']>): this {
    this.#span.setAttributes(...args);
    return this;
  }
  addEvent(...args: Parameters<Span['addEvent']>): this {
    this.#span.addEvent(...args);
    return this;
  }
  addLink(...args: Parameters<Span['addLink']>): this {
    this.#span.addLink(...args);
    return this;
  }
  addLinks(...args: Parameters<Span['addLinks']>): this {
    this.#span.addLinks(...args);
    return this;
  }
  setStatus(status: SpanStatus): this {
    this.#span.setStatus({ code: status.code });
    return this;
  }
  updateName(name: string): this {
    this.#span.updateName(bounded(name, MAX_SPAN_NAME));
    return this;
  }
  end(...args: Parameters<Span['end']>): void {
    this.#span.end(...args);
  }
  isRecording(): boolean {
    return this.#span.isRecording();
  }
  recordException(exception: Exception, time?: Parameters<Span['recordException']>[1]): void {
    const { name, code } =
      typeof exception === 'string' ? {} : (exception as { name?: unknown; code?: unknown });
    const type = safeErrorType(name ?? code);
    this.#span.recordException({ name: type }, time);
  }
}

/** A tracer whose spans are GuardedSpans; the context keeps the real span, so children still nest under it. */
function guardedTracer(tracer: Tracer): Tracer {
  const startActiveSpan = (name: string, ...rest: unknown[]): unknown => {
    const fn = rest.pop() as (span: Span) => unknown;
    return (tracer.startActiveSpan as (...a: unknown[]) => unknown)(
      bounded(name, MAX_SPAN_NAME),
      ...rest,
      (span: Span) => fn(new GuardedSpan(span)),
    );
  };
  return {
    startSpan: (name, options, context) =>
      new GuardedSpan(tracer.startSpan(bounded(name, MAX_SPAN_NAME), options, context)),
    startActiveSpan: startActiveSpan as Tracer['startActiveSpan'],
  };
}
