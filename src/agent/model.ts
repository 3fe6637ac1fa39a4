import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { APICallError, type LanguageModel, RetryError } from 'ai';
import { TackError } from '../errors.js';

export const PROVIDERS = ['anthropic', 'openai', 'openai-compatible'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** A model ready for the loop, and the `provider:id` it was made from (for prices, transcripts and output). */
export interface ResolvedModel {
  model: LanguageModel;
  /** `anthropic:claude-sonnet-4-5`, or the label a library caller gave its own model. */
  spec: string;
  provider: string;
  id: string;
}

const HOW_TO_SET =
  'Pass --model anthropic:<id>, openai:<id> or openai-compatible:<id> (with OPENAI_BASE_URL), or set "agent": { "model": "..." } in tack.json.';

/**
 * `provider:id` to an AI SDK model. Keys and base URLs come from the usual variables (ANTHROPIC_API_KEY,
 * ANTHROPIC_BASE_URL, OPENAI_API_KEY, OPENAI_BASE_URL), read from `env` here rather than by the providers, so a
 * caller (and a test) decides the environment. OpenAI goes through Chat Completions: every OpenAI-compatible
 * server speaks it, and the Responses API is OpenAI's alone. Any other AI SDK provider: pass its model to
 * the library (`AgentOptions.model`) instead of a string.
 */
export function resolveModel(
  spec: string | undefined,
  env: Readonly<Record<string, string | undefined>> = process.env,
): ResolvedModel {
  if (!spec) throw new TackError('MODEL_UNAVAILABLE', 'no model configured', { hint: HOW_TO_SET });
  const cut = spec.indexOf(':');
  const provider = cut > 0 ? spec.slice(0, cut) : '';
  const id = spec.slice(cut + 1);
  if (!(PROVIDERS as readonly string[]).includes(provider) || id === '')
    throw new TackError('MODEL_UNAVAILABLE', `"${spec}" is not a model tack knows how to reach`, {
      hint: HOW_TO_SET,
    });
  const need = (variable: string, what: string): string => {
    const value = env[variable];
    if (value) return value;
    throw new TackError('MODEL_UNAVAILABLE', `${spec}: ${variable} is not set`, {
      hint: `Set ${variable} to ${what}.`,
    });
  };
  const base = (variable: string) => env[variable] || undefined;
  let model: LanguageModel;
  if (provider === 'anthropic') {
    model = createAnthropic({
      apiKey: need('ANTHROPIC_API_KEY', 'your Anthropic API key'),
      ...(base('ANTHROPIC_BASE_URL') ? { baseURL: base('ANTHROPIC_BASE_URL') } : {}),
    })(id);
  } else if (provider === 'openai') {
    model = createOpenAI({
      apiKey: need('OPENAI_API_KEY', 'your OpenAI API key'),
      ...(base('OPENAI_BASE_URL') ? { baseURL: base('OPENAI_BASE_URL') } : {}),
    }).chat(id);
  } else {
    model = createOpenAICompatible({
      name: 'openai-compatible',
      // Without it the stream carries no usage, and the token and cost limits would count nothing.
      includeUsage: true,
      baseURL: need(
        'OPENAI_BASE_URL',
        "the server's OpenAI-compatible URL, e.g. http://127.0.0.1:11434/v1 for Ollama",
      ),
      // Local servers (Ollama, llama.cpp) take no key; send one only when set.
      ...(env.OPENAI_API_KEY ? { apiKey: env.OPENAI_API_KEY } : {}),
    })(id);
  }
  return { model, spec, provider, id };
}

/**
 * What to do about a failed model call, when tack can tell: a 404 from an OpenAI-compatible URL without `/v1` is
 * the base URL missing the `/v1` that Ollama, llama.cpp, vLLM and LM Studio serve the API under (the providers
 * append `/chat/completions` to the base URL as given).
 */
export function modelFailureHint(error: unknown): string | undefined {
  const cause = RetryError.isInstance(error) ? error.lastError : error;
  if (!APICallError.isInstance(cause) || cause.statusCode !== 404) return undefined;
  let url: URL;
  try {
    url = new URL(cause.url);
  } catch {
    return undefined;
  }
  if (!url.pathname.endsWith('/chat/completions') || url.pathname.includes('/v1/')) return undefined;
  const base = `${url.origin}${url.pathname.slice(0, -'/chat/completions'.length)}`;
  return `${cause.url} answered 404: OpenAI-compatible servers serve the API under /v1; set OPENAI_BASE_URL to ${base}/v1`;
}
