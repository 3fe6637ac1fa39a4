import { generateText, type LanguageModel, type ModelMessage } from 'ai';
import type { SkillLibrary } from '../skills/library.js';
import { aiTelemetry } from '../telemetry/spans.js';
import { estimateTextTokens } from '../tokens/count.js';
import type { AgentEvent } from './events.js';
import type { History } from './history.js';

/**
 * Keeping a long session under the context window. Two moves, cheapest first: elide the output of old tool
 * calls (it is usually the bulk, and the model can call the tool again), then have the model summarise older
 * turns. The recent turns stay as they were, and the skills the session activated are attached again after a
 * summary so their instructions are not lost with the turns that loaded them.
 */

/**
 * The messages' tokens by the one estimate every figure without a tokenizer uses (tokens/count.ts): enough to
 * decide when to compact, synchronous, no tokenizer to load.
 */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  let tokens = 0;
  for (const m of messages)
    tokens += estimateTextTokens(typeof m.content === 'string' ? m.content : JSON.stringify(m.content));
  return tokens;
}

const ELIDED_MIN_CHARS = 400;

/** Replaces the output of tool results older than the last `keepRecent` tool messages; returns how many. */
export function elideToolResults(
  messages: readonly ModelMessage[],
  keepRecent = 2,
): { messages: ModelMessage[]; elided: number } {
  const toolIndexes = messages.flatMap((m, i) => (m.role === 'tool' ? [i] : []));
  const old = new Set(toolIndexes.slice(0, Math.max(0, toolIndexes.length - keepRecent)));
  let elided = 0;
  const out = messages.map((message, i) => {
    if (!old.has(i) || message.role !== 'tool') return message;
    return {
      ...message,
      content: message.content.map((part) => {
        if (part.type !== 'tool-result') return part;
        const output = part.output;
        if (
          (output.type !== 'text' && output.type !== 'error-text') ||
          output.value.length < ELIDED_MIN_CHARS
        )
          return part;
        elided++;
        return {
          ...part,
          output: {
            type: output.type,
            value: `[output elided by compaction: ${output.value.length} characters; call ${part.toolName} again if you need it]`,
          },
        };
      }),
    } as ModelMessage;
  });
  return { messages: out, elided };
}

/**
 * Where the kept tail starts: at most `keep` messages from the end, moved back to an assistant message, so no
 * tool result is kept without the call that asked for it (providers reject that history).
 */
export function tailStart(messages: readonly ModelMessage[], keep: number): number {
  let cut = Math.max(0, messages.length - keep);
  while (cut > 0 && messages[cut]?.role !== 'assistant') cut--;
  return cut;
}

export const SUMMARY_PROMPT =
  'Summarise the conversation above for your own later use: the task, what has been done and found (files, ' +
  'values, decisions, tool results that matter), what failed and why, and what is left to do. Be specific and ' +
  'complete; drop chatter. Answer with the summary only.';

/** Replaces everything before the kept tail with the model's summary of it (plus re-attached text). */
export async function summarizeOlder(
  messages: readonly ModelMessage[],
  options: { model: LanguageModel; keep: number; reattach?: string; abortSignal?: AbortSignal },
): Promise<{ messages: ModelMessage[]; summarized: number }> {
  const cut = tailStart(messages, options.keep);
  if (cut < 2) return { messages: [...messages], summarized: 0 };
  const older = messages.slice(0, cut);
  const { text } = await generateText({
    model: options.model,
    messages: [...older, { role: 'user', content: SUMMARY_PROMPT }],
    ...(options.abortSignal ? { abortSignal: options.abortSignal } : {}),
    experimental_telemetry: aiTelemetry('tack.compaction'),
  });
  const summary: ModelMessage = {
    role: 'user',
    content:
      `<conversation_summary>\nEarlier turns were compacted. Summary of them:\n${text.trim()}\n</conversation_summary>` +
      (options.reattach ? `\n\n${options.reattach}` : ''),
  };
  return { messages: [summary, ...messages.slice(cut)], summarized: cut };
}

export type CompactionEvent = Extract<AgentEvent, { type: 'compaction' }>;

export interface CompactorOptions {
  /** The model that summarises: the one the run is on (a fallback, when the session's own one failed). */
  model: () => LanguageModel;
  history: History;
  /** The context window, in tokens. */
  window: number;
  /** Compact when a step's prompt passes this share of the window. */
  compactAt: number;
  /** The skills library and the session's active skills, attached again after a summary. */
  skills?: SkillLibrary | undefined;
  activeSkills: ReadonlySet<string>;
  emit: (event: AgentEvent) => void;
}

/**
 * A session's compaction: before each step, past `compactAt` of the window (the last prompt as the provider
 * counted it, or the history's estimate), old tool outputs are elided; when that is not enough (under 60 % of
 * the threshold) or on demand (`/compact`), the older turns are summarised and the active skills re-attached.
 */
export class Compactor {
  readonly #options: CompactorOptions;

  constructor(options: CompactorOptions) {
    this.#options = options;
  }

  /** Compacts when the history has grown past the threshold. */
  async maybeCompact(signal: AbortSignal): Promise<void> {
    const { history, window, compactAt } = this.#options;
    const size = Math.max(history.lastPromptTokens, estimateTokens(history.messages));
    if (size >= compactAt * window) await this.compact(false, signal);
  }

  /** Elides, then summarises if still large (always when `force`); undefined when there was nothing to do. */
  async compact(force: boolean, signal: AbortSignal): Promise<CompactionEvent | undefined> {
    const { history, window, compactAt } = this.#options;
    const target = compactAt * window * 0.6;
    const before = estimateTokens(history.messages);
    const elided = elideToolResults(history.messages);
    let messages = elided.messages;
    let summarized = 0;
    if (force || estimateTokens(messages) > target) {
      const reattach = await this.#activeSkillsText();
      const summary = await summarizeOlder(messages, {
        model: this.#options.model(),
        keep: 4,
        ...(reattach ? { reattach } : {}),
        abortSignal: signal,
      });
      messages = summary.messages;
      summarized = summary.summarized;
    }
    if (elided.elided === 0 && summarized === 0) return undefined;
    history.replace(messages);
    const event: CompactionEvent = {
      type: 'compaction',
      tokensBefore: before,
      tokensAfter: estimateTokens(messages),
      elidedToolResults: elided.elided,
      summarizedMessages: summarized,
      messages,
    };
    this.#options.emit(event);
    return event;
  }

  /** The bodies of the skills this session activated, for after a summary removed the turns that loaded them. */
  async #activeSkillsText(): Promise<string | undefined> {
    const { skills, activeSkills } = this.#options;
    if (!skills || activeSkills.size === 0) return undefined;
    const bodies: string[] = [];
    for (const name of activeSkills) {
      const { text } = await skills.activate(name).catch(() => ({ text: '' }));
      if (text) bodies.push(text);
    }
    return bodies.length > 0
      ? `Skills active in this session, attached again after compaction:\n${bodies.join('\n\n')}`
      : undefined;
  }
}
