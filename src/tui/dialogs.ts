import type { ApprovalAnswer, ApprovalRequest, Approver } from '../agent/approval.js';
import type { DefinitionReviewer } from '../agent/held.js';
import { type AgentInteraction, type ElicitationAnswer, elicitationValue } from '../agent/interaction.js';
import type { HeldDefinition } from '../security/pins.js';

/** A question for the person at the terminal, shown in place of the input box until answered. */
export type Dialog =
  | { kind: 'approval'; request: ApprovalRequest; answer(answer: ApprovalAnswer): void }
  | { kind: 'definition'; held: HeldDefinition; diff: string; answer(accept: boolean): void }
  | { kind: 'confirm'; title: string; body: string; answer(yes: boolean): void }
  | { kind: 'question'; title: string; prompt: string; answer(text: string | undefined): void };

/**
 * The library's callbacks that ask a person (approver, definition reviewer, elicitation and sampling), turned
 * into a queue of dialogs the TUI shows one at a time. The session waits on each promise; the TUI resolves it
 * with a keystroke. Nothing of the loop is here: the gate decides, this only asks.
 */
export class DialogQueue {
  readonly #queue: Dialog[] = [];
  readonly #listeners = new Set<() => void>();

  get current(): Dialog | undefined {
    return this.#queue[0];
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  /** Every open question answered "no" (the TUI is closing): the session is never left waiting. */
  cancelAll(): void {
    for (const dialog of this.#queue.splice(0)) {
      if (dialog.kind === 'approval') dialog.answer({ decision: 'deny', reason: 'the chat was closed' });
      else if (dialog.kind === 'question') dialog.answer(undefined);
      else dialog.answer(false);
    }
    this.#changed();
  }

  readonly approver: Approver = (request) =>
    new Promise((resolve) => this.#push({ kind: 'approval', request, answer: resolve }));

  readonly reviewer: DefinitionReviewer = (held, diff) =>
    new Promise((resolve) => this.#push({ kind: 'definition', held, diff, answer: resolve }));

  readonly interaction: AgentInteraction = {
    elicit: async (question) => {
      const header = `${question.server} asks`;
      if (question.url) {
        const done = await this.#confirm(
          header,
          `${question.message}\n\nOpen ${question.url}, then answer y when done.`,
        );
        return { action: done ? 'accept' : 'decline' };
      }
      const properties = (question.requestedSchema?.properties ?? {}) as Record<
        string,
        { type?: string; description?: string }
      >;
      const content: Record<string, unknown> = {};
      for (const [name, schema] of Object.entries(properties)) {
        const raw = await this.#ask(
          `${header}: ${question.message}`,
          `${name}${schema.description ? ` (${schema.description})` : ''}`,
        );
        if (raw === undefined) return { action: 'cancel' } satisfies ElicitationAnswer;
        content[name] = elicitationValue(schema.type, raw);
      }
      const send = await this.#confirm(header, `Send this answer?\n${JSON.stringify(content, null, 2)}`);
      return send ? { action: 'accept', content } : { action: 'decline' };
    },
    approveSampling: (request) =>
      this.#confirm(
        `${request.server} wants the model to write up to ${request.maxTokens} tokens`,
        request.messages.map((m) => `${m.role}: ${m.text}`).join('\n'),
      ),
  };

  /** Answers the dialog on top and shows the next one. */
  settle(): void {
    this.#queue.shift();
    this.#changed();
  }

  #confirm(title: string, body: string): Promise<boolean> {
    return new Promise((resolve) => this.#push({ kind: 'confirm', title, body, answer: resolve }));
  }

  #ask(title: string, prompt: string): Promise<string | undefined> {
    return new Promise((resolve) => this.#push({ kind: 'question', title, prompt, answer: resolve }));
  }

  #push(dialog: Dialog): void {
    this.#queue.push(dialog);
    this.#changed();
  }

  #changed(): void {
    for (const listener of this.#listeners) listener();
  }
}
