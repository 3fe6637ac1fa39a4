import { tool as aiTool, jsonSchema, type ModelMessage, streamText, type ToolSet } from 'ai';
import { aiTelemetry, inSpan } from '../telemetry/spans.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { AgentEvent, EndReason, Usage } from './events.js';
import { fallbackReason, type ModelChoice } from './fallback.js';
import type { History } from './history.js';
import type { ResolvedModel } from './model.js';
import type { Limits } from './options.js';
import type { ToolCallRequest, ToolCallResult, ToolPipeline } from './pipeline.js';
import { costOf, type Price } from './prices.js';
import { marksBreakpoints, withBreakpoints } from './prompt-cache.js';
import { historyFor } from './provider-history.js';
import { failedRequestBody, RequestRecorder } from './request-record.js';
import { type AgentTool, wrapResult } from './toolset.js';

export interface TurnRunnerOptions {
  model: ResolvedModel;
  /** Provider retries per model call. */
  maxRetries: number;
  /** The model's price (undefined: unknown, counted as 0). */
  price: Price | undefined;
  /** Where a step goes, in order, when the model it ran on failed with an error of its provider (fallback.ts). */
  fallback?: readonly ModelChoice[];
  history: History;
  pipeline: Pick<ToolPipeline, 'run' | 'refuse'>;
  /** The tool a call names (its result is wrapped with the tool's name and server). */
  find: (name: string) => AgentTool | undefined;
  /** The same call this many times in a row gets a warning instead of a run; once more ends the run. */
  loopThreshold: number;
  /** Tool calls of one step run at most this many at a time. */
  concurrency: number;
  emit: (event: AgentEvent) => void;
}

/** What one model call gave: its text, and the tool calls it asked for. */
export interface ModelStep {
  text: string;
  toolCalls: ToolCallRequest[];
}

/**
 * One step of a run, in two halves: the model call (the step's tools and system prompt, streamed; text deltas
 * out as events; the assistant message into the history; usage and cost added), then the tool calls it asked
 * for (loop detection first, then up to `concurrency` at a time through the tool pipeline, and one `tool`
 * message with every result wrapped in `<tool_result>`).
 */
export class TurnRunner {
  readonly #options: TurnRunnerOptions;
  #lastCall: { key: string; count: number } | undefined;
  /** The model steps run on: the session's own, or the fallback it moved to during this run. */
  #current: ModelChoice;
  /** Where #current is in the fallback list; -1 on the session's own model. */
  #fallbackAt = -1;
  /** Every model call's body goes to the transcript, each history message stored once (request-record.ts). */
  readonly #recorder = new RequestRecorder();

  constructor(options: TurnRunnerOptions) {
    this.#options = options;
    this.#current = { model: options.model, price: options.price };
  }

  /** The model the next step runs on. */
  get current(): ModelChoice {
    return this.#current;
  }

  /**
   * A new run (a new user message): repetition is counted from zero again, and the run starts on the session's
   * own model again (a provider that was down may be back; staying on the fallback is one failed step away).
   */
  startRun(): void {
    this.#lastCall = undefined;
    this.#current = { model: this.#options.model, price: this.#options.price };
    this.#fallbackAt = -1;
  }

  /**
   * The step's model call; when it fails after its retries with an error of the provider (fallbackReason), the
   * same step goes to the next model of the fallback list, which the rest of the run stays on.
   */
  async callModel(
    tools: readonly AgentTool[],
    system: string,
    signal: AbortSignal,
    step: number,
  ): Promise<ModelStep> {
    for (;;) {
      try {
        return await this.#callOnce(tools, system, signal, step);
      } catch (error) {
        const reason = signal.aborted ? undefined : fallbackReason(error);
        const next = reason === undefined ? undefined : this.#options.fallback?.[this.#fallbackAt + 1];
        if (!next || reason === undefined) throw error;
        const from = this.#current.model.spec;
        this.#current = next;
        this.#fallbackAt++;
        this.#options.emit({ type: 'model-fallback', step, from, to: next.model.spec, reason });
      }
    }
  }

  async #callOnce(
    tools: readonly AgentTool[],
    system: string,
    signal: AbortSignal,
    step: number,
  ): Promise<ModelStep> {
    const { model } = this.#current;
    const toolSet: ToolSet = {};
    for (const t of tools) {
      toolSet[t.name] = aiTool({
        description: t.description,
        inputSchema: jsonSchema(t.inputSchema as never),
      });
    }
    // A CLIENT span per model call (GenAI semantic conventions), the AI SDK's own spans inside it.
    return inSpan(
      `chat ${model.id}`,
      {
        kind: 'client',
        attributes: {
          'gen_ai.operation.name': 'chat',
          'gen_ai.provider.name': model.provider,
          'gen_ai.request.model': model.id,
          'tack.step.number': step,
        },
      },
      async (span) => {
        const called = await this.#stream(toolSet, system, signal, step);
        span.set({
          'gen_ai.response.model': called.responseModel,
          'gen_ai.response.id': called.responseId,
          'gen_ai.response.finish_reasons': [called.finishReason],
          'gen_ai.usage.input_tokens': called.usage.inputTokens,
          'gen_ai.usage.output_tokens': called.usage.outputTokens,
          'gen_ai.usage.cache_read.input_tokens': called.usage.cachedInputTokens,
          'gen_ai.usage.cache_creation.input_tokens': called.usage.cacheWriteTokens ?? 0,
          'tack.cost.usd': called.usage.costUsd,
        });
        return called.step;
      },
    );
  }

  /** The streamed call itself: deltas out as events, the answer into the history, usage and cost added. */
  async #stream(toolSet: ToolSet, system: string, signal: AbortSignal, step: number) {
    const { history, emit } = this.#options;
    const { model, price } = this.#current;
    let failure: unknown;
    // Parts another provider wrote that this one would reject are converted (a fallback, a /model switch); the
    // breakpoints are marked on what is sent, never on the history.
    const messages = historyFor(history.messages, model.provider);
    const prompt = marksBreakpoints(model) ? withBreakpoints(system, messages) : { system, messages };
    const result = streamText({
      model: model.model,
      system: prompt.system,
      messages: prompt.messages,
      tools: toolSet,
      abortSignal: signal,
      maxRetries: this.#options.maxRetries,
      // Errors arrive as stream parts below; the default handler would also print them.
      onError: () => {},
      experimental_telemetry: aiTelemetry('tack.step'),
    });
    try {
      for await (const part of result.fullStream) {
        if (part.type === 'text-delta') emit({ type: 'text-delta', text: part.text });
        else if (part.type === 'error') failure = part.error;
      }
    } catch (error) {
      failure = error;
    }
    await this.#recordRequest(result, failure, step);
    if (failure !== undefined) throw failure;
    const response = await result.response;
    for (const message of response.messages) history.push(message);
    const usage = await result.usage;
    // The provider's own figures: inputTokens counts cache reads and writes too (the AI SDK adds Anthropic's).
    const written = usage.inputTokenDetails?.cacheWriteTokens ?? 0;
    const stepUsage = {
      inputTokens: usage.inputTokens ?? 0,
      outputTokens: usage.outputTokens ?? 0,
      cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
      ...(written > 0 ? { cacheWriteTokens: written } : {}),
    };
    // At the prices of the model that ran the step, which a fallback may have changed.
    const withCost: Usage = { ...stepUsage, costUsd: costOf(stepUsage, price) };
    const total = history.addUsage(withCost, model.spec);
    history.lastPromptTokens = stepUsage.inputTokens;
    emit({ type: 'usage', step, stepUsage: withCost, total, model: model.spec });
    const toolCalls = (await result.toolCalls).map((c) => ({
      callId: c.toolCallId,
      name: c.toolName,
      input: c.input,
      invalid: (c as { invalid?: boolean }).invalid === true,
      error: (c as { error?: unknown }).error,
    }));
    return {
      step: { text: await result.text, toolCalls } satisfies ModelStep,
      usage: withCost,
      responseModel: response.modelId,
      responseId: response.id,
      finishReason: await result.finishReason,
    };
  }

  /**
   * The `request` event of a call that ended: the body it sent, from the call (settled once its stream has
   * ended) or, when it failed before answering, from the provider's error.
   */
  async #recordRequest(
    result: { request: PromiseLike<{ body?: unknown }> },
    failure: unknown,
    step: number,
  ): Promise<void> {
    let body: unknown;
    try {
      // Settled once the stream has ended, in the usual case; a stream that broke off may leave it pending, and a
      // record must never hold the step up: then the provider's error says what was sent.
      const settled = await Promise.race([
        result.request,
        new Promise<undefined>((resolve) => setImmediate(() => resolve(undefined))),
      ]);
      body = settled === undefined ? failedRequestBody(failure) : settled.body;
    } catch {
      body = failedRequestBody(failure);
    }
    if (body === undefined) return;
    const outcome = failure === undefined ? 'answered' : 'failed';
    const model = this.#current.model.spec;
    this.#options.emit({ type: 'request', step, model, outcome, ...this.#recorder.record(body) });
  }

  /** Runs the step's tool calls; `loop` when the model repeated a call past the warning. */
  async runCalls(calls: ToolCallRequest[], step: number, signal: AbortSignal): Promise<'loop' | undefined> {
    const { history, pipeline, loopThreshold: threshold } = this.#options;
    const tools = calls.map((call) => this.#options.find(call.name));
    // Repetition is judged in the order the model asked, before anything runs.
    const verdicts = calls.map((call) => {
      const key = `${call.name} ${canonicalJson(call.input ?? {})}`;
      this.#lastCall =
        this.#lastCall?.key === key ? { key, count: this.#lastCall.count + 1 } : { key, count: 1 };
      return this.#lastCall.count > threshold ? 'stop' : this.#lastCall.count === threshold ? 'warn' : 'run';
    });
    if (verdicts.includes('stop')) {
      // The history must stay valid: every call the model made gets a result before the run ends.
      history.push({
        role: 'tool',
        content: calls.map((c) =>
          toolResultPart(c, 'Not run: the run was stopped for repeating this call.', true),
        ),
      });
      return 'loop';
    }
    const results = new Array<ToolCallResult>(calls.length);
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const i = next++;
        const call = calls[i]!;
        results[i] =
          verdicts[i] === 'warn'
            ? pipeline.refuse(
                call,
                { signal, step },
                `You have called ${call.name} with these same arguments ${threshold} times in a row; the result will not change. Do something different, or give your answer. Calling it again ends the run.`,
              )
            : await pipeline.run(call, { signal, step });
      }
    };
    const workers = Math.min(Math.max(1, this.#options.concurrency), calls.length);
    await Promise.all(Array.from({ length: workers }, worker));
    history.push({
      role: 'tool',
      content: calls.map((call, i) => {
        const tool = tools[i];
        const { text, isError } = results[i]!;
        return toolResultPart(call, tool ? wrapResult(tool, text, isError) : text, isError);
      }),
    });
    return undefined;
  }
}

/** The limit a run has reached before its next step, if any. */
export function limitReached(
  limits: Limits,
  total: Usage,
  steps: number,
): { reason: EndReason; detail: string } | undefined {
  const l = limits;
  const t = total;
  if (steps >= l.maxSteps)
    return { reason: 'max-steps', detail: `stopped after ${steps} steps (--max-steps ${l.maxSteps})` };
  if (l.maxInputTokens !== undefined && t.inputTokens >= l.maxInputTokens)
    return {
      reason: 'max-input-tokens',
      detail: `${t.inputTokens} input tokens used (limit ${l.maxInputTokens})`,
    };
  if (l.maxOutputTokens !== undefined && t.outputTokens >= l.maxOutputTokens)
    return {
      reason: 'max-output-tokens',
      detail: `${t.outputTokens} output tokens used (limit ${l.maxOutputTokens})`,
    };
  if (l.maxCostUsd !== undefined && t.costUsd >= l.maxCostUsd)
    return { reason: 'max-cost', detail: `$${t.costUsd.toFixed(4)} spent (limit $${l.maxCostUsd})` };
  return undefined;
}

function toolResultPart(
  call: ToolCallRequest,
  text: string,
  isError: boolean,
): Extract<Extract<ModelMessage, { role: 'tool' }>['content'][number], { type: 'tool-result' }> {
  return {
    type: 'tool-result',
    toolCallId: call.callId,
    toolName: call.name,
    output: { type: isError ? 'error-text' : 'text', value: text },
  };
}
