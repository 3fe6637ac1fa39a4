import { generateText, type LanguageModel, type ModelMessage } from 'ai';

/**
 * Keeping a long session under the context window. Two moves, cheapest first: elide the output of old tool
 * calls (it is usually the bulk, and the model can call the tool again), then have the model summarise older
 * turns. The recent turns stay as they were, and the skills the session activated are attached again after a
 * summary so their instructions are not lost with the turns that loaded them.
 */

/** A rough token count (4 characters a token): enough to decide when to compact, no tokenizer to load. */
export function estimateTokens(messages: readonly ModelMessage[]): number {
  let chars = 0;
  for (const m of messages)
    chars += typeof m.content === 'string' ? m.content.length : JSON.stringify(m.content).length;
  return Math.ceil(chars / 4);
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
  });
  const summary: ModelMessage = {
    role: 'user',
    content:
      `<conversation_summary>\nEarlier turns were compacted. Summary of them:\n${text.trim()}\n</conversation_summary>` +
      (options.reattach ? `\n\n${options.reattach}` : ''),
  };
  return { messages: [summary, ...messages.slice(cut)], summarized: cut };
}
