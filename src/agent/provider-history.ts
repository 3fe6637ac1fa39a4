import { createHash } from 'node:crypto';
import type { AssistantModelMessage, ModelMessage, ToolModelMessage } from 'ai';

/** What a provider takes as a tool call's id; ids outside it are renamed. */
const ID_RULES: Readonly<Record<string, RegExp>> = {
  // Anthropic's tool_use ids: letters, digits, `_` and `-` only.
  anthropic: /^[A-Za-z0-9_-]{1,64}$/,
  // OpenAI takes at most 40 characters.
  openai: /^.{1,40}$/s,
};

/** The providerOptions keys a provider reads; a reasoning part carrying only other keys belongs to another. */
const OWN_KEYS: Readonly<Record<string, readonly string[]>> = {
  anthropic: ['anthropic'],
  openai: ['openai'],
  'openai-compatible': ['openai-compatible', 'openaiCompatible'],
};

/**
 * The history as `provider` takes it, when parts of it came from another one (a fallback, a `/model` switch):
 * the AI SDK's messages are provider-neutral, but a few of their contents are not. Tool-call ids another
 * provider made that this one rejects (Anthropic takes `[A-Za-z0-9_-]` only, OpenAI 40 characters at most) are
 * renamed, the same way in the call and in its result; reasoning signed by another provider is dropped (no other
 * provider can verify it, and OpenAI-compatible servers would get its text as their own `reasoning_content`); for
 * Anthropic, whitespace-only text parts and the assistant messages they leave empty go too (it rejects both). The
 * same array comes back when nothing needs changing, which is every step of a session that stayed on one provider.
 */
export function historyFor(messages: ModelMessage[], provider: string): ModelMessage[] {
  const own = OWN_KEYS[provider];
  if (!own) return messages;
  const idRule = ID_RULES[provider];
  const renamed = new Map<string, string>();
  const idFor = (id: string): string => {
    if (!idRule || idRule.test(id)) return id;
    let next = renamed.get(id);
    if (next === undefined) {
      next = `call_${createHash('sha256').update(id).digest('hex').slice(0, 24)}`;
      renamed.set(id, next);
    }
    return next;
  };
  let changed = false;
  const out: ModelMessage[] = [];
  for (const message of messages) {
    const next =
      message.role === 'assistant'
        ? assistantFor(message, provider, own, idFor)
        : message.role === 'tool'
          ? toolFor(message, idFor)
          : message;
    if (next !== message) changed = true;
    if (next) out.push(next);
  }
  return changed ? out : messages;
}

type AssistantPart = Exclude<AssistantModelMessage['content'], string>[number];

function assistantFor(
  message: AssistantModelMessage,
  provider: string,
  own: readonly string[],
  idFor: (id: string) => string,
): AssistantModelMessage | undefined {
  if (typeof message.content === 'string') {
    return provider === 'anthropic' && message.content.trim() === '' ? undefined : message;
  }
  let changed = false;
  const content: AssistantPart[] = [];
  for (const part of message.content) {
    if (part.type === 'reasoning' && signedElsewhere(part.providerOptions, own)) {
      changed = true;
      continue;
    }
    if (part.type === 'text' && provider === 'anthropic' && part.text.trim() === '') {
      changed = true;
      continue;
    }
    if (part.type === 'tool-call' || part.type === 'tool-result') {
      const id = idFor(part.toolCallId);
      if (id !== part.toolCallId) {
        changed = true;
        content.push({ ...part, toolCallId: id });
        continue;
      }
    }
    content.push(part);
  }
  if (!changed) return message;
  if (content.length === 0 && provider === 'anthropic') return undefined;
  return { ...message, content };
}

function toolFor(message: ToolModelMessage, idFor: (id: string) => string): ToolModelMessage {
  let changed = false;
  const content = message.content.map((part) => {
    if (part.type !== 'tool-result') return part;
    const id = idFor(part.toolCallId);
    if (id === part.toolCallId) return part;
    changed = true;
    return { ...part, toolCallId: id };
  });
  return changed ? { ...message, content } : message;
}

/** Provider metadata (a signature) that names providers, none of them the one the request goes to. */
function signedElsewhere(options: Record<string, unknown> | undefined, own: readonly string[]): boolean {
  const keys = Object.keys(options ?? {});
  return keys.length > 0 && !keys.some((key) => own.includes(key));
}
