import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { type EmbeddingModel, embedMany } from 'ai';
import { TackError } from '../errors.js';
import { sendWarning, type WarningSink } from '../util/warnings.js';
import { type EmbeddingCache, type EmbedFunction, SemanticRanker } from './semantic.js';

/**
 * An embedding model through the AI SDK (`embedMany`), named as tack.json's `toolSearch.embeddings` names it:
 * `openai:<id>` (OpenAI, or any server that speaks its API at `baseURL`) or `openai-compatible:<id>` (a local
 * Ollama, llama.cpp or LM Studio server at `baseURL`, no key needed).
 */
export interface EmbeddingsSettings {
  /** `openai:text-embedding-3-small`, `openai-compatible:nomic-embed-text`. */
  model: string;
  /** The endpoint's base URL, with its `/v1` (`http://127.0.0.1:11434/v1` for Ollama). */
  baseURL?: string | undefined;
  /** The key; default OPENAI_API_KEY from the environment (none is sent to an openai-compatible server without). */
  apiKey?: string | undefined;
  /** Ask the model for vectors of this size (models that support it, such as text-embedding-3). */
  dimensions?: number | undefined;
  /** Per request (default 10 s): a search waits no longer before it goes on lexically. */
  timeoutMs?: number | undefined;
}

export const EMBEDDING_PROVIDERS = ['openai', 'openai-compatible'] as const;

/** The cache key of a model: the same model id behind two endpoints, or at two sizes, is two models. */
export function embeddingsCacheKey(settings: EmbeddingsSettings): string {
  return [settings.model, settings.baseURL ?? '', settings.dimensions ?? ''].join('|');
}

/** The AI SDK embedding model the settings name; a `TackError` (CONFIG_INVALID) when they name none. */
export function embeddingModel(
  settings: EmbeddingsSettings,
  env: Readonly<Record<string, string | undefined>> = process.env,
): EmbeddingModel {
  const cut = settings.model.indexOf(':');
  const provider = cut > 0 ? settings.model.slice(0, cut) : '';
  const id = settings.model.slice(cut + 1);
  if (!(EMBEDDING_PROVIDERS as readonly string[]).includes(provider) || id === '')
    throw new TackError(
      'CONFIG_INVALID',
      `toolSearch.embeddings.model "${settings.model}" names no embedding model`,
      {
        hint: 'Use openai:<model id>, or openai-compatible:<model id> with "baseURL" (a local Ollama, llama.cpp or LM Studio server).',
      },
    );
  const apiKey = settings.apiKey ?? env.OPENAI_API_KEY;
  if (provider === 'openai')
    return createOpenAI({
      ...(apiKey ? { apiKey } : {}),
      ...(settings.baseURL ? { baseURL: settings.baseURL } : {}),
    }).embeddingModel(id);
  if (!settings.baseURL)
    throw new TackError('CONFIG_INVALID', `toolSearch.embeddings: "${settings.model}" needs "baseURL"`, {
      hint: 'The server\'s OpenAI-compatible URL, e.g. "http://127.0.0.1:11434/v1" for Ollama.',
    });
  return createOpenAICompatible({
    name: 'openai-compatible',
    baseURL: settings.baseURL,
    ...(apiKey ? { apiKey } : {}),
  }).embeddingModel(id);
}

/**
 * `embedMany` with no retries (a search must not hang on a down endpoint: it goes on lexically, and the ranker
 * tries again later) and a timeout per call.
 */
export function embedFunction(
  settings: EmbeddingsSettings,
  env: Readonly<Record<string, string | undefined>> = process.env,
): EmbedFunction {
  const model = embeddingModel(settings, env);
  const timeoutMs = settings.timeoutMs ?? 10_000;
  const providerOptions =
    settings.dimensions === undefined
      ? undefined
      : {
          openai: { dimensions: settings.dimensions },
          'openai-compatible': { dimensions: settings.dimensions },
        };
  return async (texts, signal) => {
    const timeout = AbortSignal.timeout(timeoutMs);
    const { embeddings } = await embedMany({
      model,
      values: texts,
      maxRetries: 0,
      abortSignal: signal ? AbortSignal.any([signal, timeout]) : timeout,
      ...(providerOptions ? { providerOptions } : {}),
    });
    return embeddings;
  };
}

/** tack.json's `toolSearch.embeddings` as a ranker: vectors cached in `cache` (the store), lexical while down. */
export function semanticRanker(
  settings: EmbeddingsSettings & { weight?: number | undefined },
  options: {
    cache?: EmbeddingCache | undefined;
    onUnavailable?: ((reason: string) => void) | undefined;
    /** After a failure, lexical only for this long (default 60 s). */
    retryAfterMs?: number | undefined;
    env?: Readonly<Record<string, string | undefined>>;
  } = {},
): SemanticRanker {
  return new SemanticRanker({
    model: embeddingsCacheKey(settings),
    embed: embedFunction(settings, options.env),
    cache: options.cache,
    weight: settings.weight,
    onUnavailable: options.onUnavailable,
    retryAfterMs: options.retryAfterMs,
  });
}

/** The warning a ranker whose endpoint is down gives (once per outage). */
export function semanticUnavailableMessage(settings: EmbeddingsSettings, reason: string): string {
  return `tool search: the embeddings endpoint for ${settings.model} cannot be reached (${reason.split('\n')[0]}); searching lexically until it answers`;
}

/**
 * The ranker for tack.json's `toolSearch.embeddings`, or none when it is not set; an endpoint that is down is
 * reported to `onWarning` once per outage.
 */
export function configuredSemanticRanker(
  settings: (EmbeddingsSettings & { weight?: number | undefined }) | undefined,
  cache: EmbeddingCache | undefined,
  onWarning: WarningSink | undefined,
): SemanticRanker | undefined {
  if (!settings) return undefined;
  return semanticRanker(settings, {
    cache,
    onUnavailable: (reason) =>
      sendWarning(onWarning, {
        code: 'SEMANTIC_SEARCH_UNAVAILABLE',
        message: semanticUnavailableMessage(settings, reason),
      }),
  });
}
