import type { ModelMessage } from 'ai';
import { type AgentEvent, type Usage, ZERO_USAGE } from './events.js';
import { addUsage } from './prices.js';

/**
 * A session's history and running totals: what its parts share (the turn runner appends to it, compaction
 * replaces it, a sub-agent's usage adds to it) and the session owns. Every appended message is a `message` event.
 */
export class History {
  #messages: ModelMessage[];
  #total: Usage;
  /** The session's own steps' usage by the `provider:id` that ran them (sub-agents' usage is in the total only). */
  readonly #byModel = new Map<string, Usage>();
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

  /** This session's steps' usage by model since it started (or was resumed), in the order they first ran. */
  get usageByModel(): ReadonlyMap<string, Usage> {
    return this.#byModel;
  }

  /** Adds a step's (or a sub-agent's) usage to the totals, and a step's to its model's; returns the new totals. */
  addUsage(usage: Usage, model?: string): Usage {
    this.#total = addUsage(this.#total, usage);
    if (model !== undefined)
      this.#byModel.set(model, addUsage(this.#byModel.get(model) ?? ZERO_USAGE, usage));
    return this.#total;
  }
}
