import { createHash } from 'node:crypto';
import type { ModelMessage, SystemModelMessage } from 'ai';
import type { ResolvedModel } from './model.js';
import type { AgentTool } from './toolset.js';

/** Anthropic's one cache lifetime the AI SDK maps to `cache_control: {type: "ephemeral"}` (5 minutes). */
const BREAKPOINT = { anthropic: { cacheControl: { type: 'ephemeral' } } } as const;

/**
 * Whether requests must mark where the provider may cache: Anthropic caches only up to the `cache_control`
 * breakpoints a request carries; OpenAI (and the servers speaking its format) cache a long prefix by themselves.
 * A library caller's own model is judged by the AI SDK provider it was made with.
 */
export function marksBreakpoints(model: ResolvedModel): boolean {
  if (model.provider === 'anthropic') return true;
  return typeof model.model !== 'string' && model.model.provider.startsWith('anthropic');
}

/**
 * The system prompt and history with two breakpoints (of the four Anthropic allows): one on the system prompt,
 * which closes the stable prefix (the provider orders tools, then system, then messages), and one on the last
 * message, so the next step reads this step's whole prompt from the cache and pays full price only for what
 * was added since. The history itself is left as it is: the marks exist only in the request.
 */
export function withBreakpoints(
  system: string,
  messages: readonly ModelMessage[],
): { system: string | SystemModelMessage; messages: ModelMessage[] } {
  const last = messages.at(-1);
  const marked =
    last === undefined
      ? [...messages]
      : [
          ...messages.slice(0, -1),
          // The spread keeps the message's own role and content; only its provider options gain the mark.
          { ...last, providerOptions: { ...last.providerOptions, ...BREAKPOINT } } as ModelMessage,
        ];
  // Anthropic refuses an empty text block, and an empty prefix has nothing worth caching.
  if (system === '') return { system, messages: marked };
  return { system: { role: 'system', content: system, providerOptions: BREAKPOINT }, messages: marked };
}

/**
 * sha256 (first 16 hex digits) of the prefix a step sends before its history: the system prompt and the tool
 * definitions in the order and form they are sent. Equal hashes from step to step are what lets a provider
 * serve that prefix from its cache; a change names the step that broke it.
 */
export function prefixHash(system: string, tools: readonly AgentTool[]): string {
  const definitions = tools.map((t) => [t.name, t.description, t.inputSchema]);
  return createHash('sha256')
    .update(JSON.stringify([system, definitions]))
    .digest('hex')
    .slice(0, 16);
}
