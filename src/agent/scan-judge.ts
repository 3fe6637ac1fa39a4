import { generateText } from 'ai';
import type { JudgeCall } from '../security/judge.js';
import { aiTelemetry } from '../telemetry/spans.js';
import { resolveModel } from './model.js';

/**
 * The scan judge's model call (security/judge.ts `JudgeCall`) for a `provider:id` spec, resolved as `agent.model`
 * is (keys and base URLs from the environment): one request, no retries, within `timeoutMs`.
 */
export function judgeCall(
  spec: string,
  env: Readonly<Record<string, string | undefined>> = process.env,
  timeoutMs = 60_000,
): JudgeCall {
  const { model } = resolveModel(spec, env);
  return async ({ system, user }, signal) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const { text } = await generateText({
      model,
      system,
      prompt: user,
      // One line of JSON: a bound keeps a judge that rambles cheap (and says the model's limit is not needed).
      maxOutputTokens: 400,
      maxRetries: 0,
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      experimental_telemetry: aiTelemetry('tack.scan-judge'),
    });
    return text;
  };
}
