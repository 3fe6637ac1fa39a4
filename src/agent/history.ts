import type { ModelMessage } from 'ai';
import type { AgentEvent, Usage } from './events.js';
import { addUsage } from './prices.js';

/**
 * A session's history and running totals: what its parts share (the turn runner appends to it, compaction
 * replaces it, a sub-agent's usage adds to it) and the session owns. Every appended message is a `message` event.
 */
export class History {
  #messages: ModelMessage[];
  #total: Usage;
  /** The last step's prompt as the provider counted it; 0 after compaction until the next step. */
  lastPromptTokens = 0;
  readonly #emit: (event: AgentEvent) => void;

  constructor(messages: readonly ModelMessage[], total: Usage, emit: (event: AgentEvent) => void) {
    this.#messages = [...messages];
    this.#total = total;
    this.#emit = emit;
  }

  /** The messages sent to the model next, in order (the array itself: the model call takes it as it is). */
  get messages(): ModelMessage[] {
    return this.#messages;
  }

  get usage(): Usage {
    return this.#total;
  }

  push(message: ModelMessage): void {
    this.#messages.push(message);
    this.#emit({ type: 'message', message });
  }

  /** After compaction: the history starts over from `messages` (the `compaction` event records them). */
  replace(messages: ModelMessage[]): void {
    this.#messages = messages;
    this.lastPromptTokens = 0;
  }

  /** Adds a step's (or a sub-agent's) usage to the totals; returns the new totals. */
  addUsage(usage: Usage): Usage {
    this.#total = addUsage(this.#total, usage);
    return this.#total;
  }
}
