import type { Catalog } from '../mcp/catalog.js';
import { hostDefinitions } from '../mcp/definitions.js';
import type { McpHost } from '../mcp/host.js';
import { HeldOnce, heldNotice, heldToolText, heldWhy } from '../security/held.js';
import type { DefinitionGuard, HeldDefinition } from '../security/pins.js';
import type { ContextPart } from './context.js';
import type { AgentEvent } from './events.js';

/** Shown a held definition and its diff against the pin; true accepts it (the pin moves to the new version). */
export type DefinitionReviewer = (held: HeldDefinition, diff: string) => Promise<boolean>;

/** A held definition, with the model-visible name of the tool it is (when it is one). */
export type HeldEntry = HeldDefinition & { modelName?: string };

export interface HeldReviewOptions {
  /** Absent: nothing is pinned or held (no store, or pinning off). */
  guard: DefinitionGuard | undefined;
  reviewer?: DefinitionReviewer | undefined;
  emit: (event: AgentEvent) => void;
}

/**
 * The session's side of pinning (security/pins.ts): whenever the host's catalog changes, what each server offers
 * goes to the guard, which pins what is new and holds back what changed or was flagged. Held tools are left out
 * of the step's tools (the tool set asks `heldTools`), held instructions out of the system prompt, and the model
 * is told which tools are unavailable and why (`part`) without repeating their new, untrusted text. Each held
 * definition is announced once, and put to the reviewer (a person, in `tack chat`) once.
 */
export class HeldReview {
  readonly #guard: DefinitionGuard | undefined;
  readonly #reviewer: DefinitionReviewer | undefined;
  readonly #emit: (event: AgentEvent) => void;
  /** Definitions held back in the current catalog (changed since approved, or flagged by the scan). */
  #held: HeldEntry[] = [];
  /** Held definitions already announced or put to the reviewer, by server, kind, name and digest. */
  readonly #announced = new HeldOnce();
  readonly #reviewed = new HeldOnce();

  constructor(options: HeldReviewOptions) {
    this.#guard = options.guard;
    this.#reviewer = options.reviewer;
    this.#emit = options.emit;
  }

  /** Whether definitions are pinned at all this session. */
  get pinning(): boolean {
    return this.#guard !== undefined;
  }

  /** Held back as of the last review. */
  get held(): readonly HeldEntry[] {
    return this.#held;
  }

  /** Pins what is new in `catalog`, holds what changed or is flagged, and announces each held definition once. */
  async review(host: McpHost, catalog: Catalog): Promise<void> {
    if (!this.#guard) return;
    const review = await this.#guard.reviewAll(hostDefinitions(host, catalog));
    this.#held = review.held.map((h) => {
      const modelName = catalog.tools.find(
        (t) => h.kind === 'tool' && t.server === h.server && t.definition.name === h.name,
      )?.name;
      if (this.#announced.first(h))
        this.#emit({ type: 'notice', text: heldNotice(h), definition: definitionNotice(h, 'held') });
      return { ...h, ...(modelName ? { modelName } : {}) };
    });
  }

  /** The model-visible names of the held tools. */
  heldTools(): Set<string> {
    return new Set(this.#held.flatMap((h) => (h.kind === 'tool' && h.modelName ? [h.modelName] : [])));
  }

  /** The servers whose instructions are held. */
  heldInstructions(): Set<string> {
    return new Set(this.#held.filter((h) => h.kind === 'instructions').map((h) => h.server));
  }

  /**
   * Whether a held definition was accepted elsewhere meanwhile (`tack pins accept` in another terminal): the
   * catalog must be reviewed again. One store read per server with held definitions.
   */
  async released(): Promise<boolean> {
    return this.#guard !== undefined && this.#held.length > 0 && (await this.#guard.released(this.#held));
  }

  /** Whether a reviewer can be asked. */
  get asks(): boolean {
    return this.#guard !== undefined && this.#reviewer !== undefined;
  }

  /** Puts each held definition not yet reviewed to the reviewer; true when one was accepted (review again). */
  async ask(): Promise<boolean> {
    const guard = this.#guard;
    const reviewer = this.#reviewer;
    if (!guard || !reviewer) return false;
    let accepted = false;
    for (const h of this.#held) {
      if (!this.#reviewed.first(h)) continue;
      if (!(await reviewer(h, await guard.diff(h)))) continue;
      await guard.accept(h);
      accepted = true;
      this.#emit({
        type: 'notice',
        text: `accepted: ${h.kind} ${h.name || '(instructions)'} of ${h.server}`,
        definition: definitionNotice(h, 'accepted'),
      });
    }
    return accepted;
  }

  /** What the model is told when it calls a held tool by name; undefined when `name` is not held. */
  message(name: string): string | undefined {
    const held = this.#held.find((h) => h.modelName === name);
    return held && heldToolText(name, held, 'harness');
  }

  /** Tells the model which tools are disabled and why, without repeating their (untrusted) new text. */
  part(): ContextPart | undefined {
    const tools = this.#held.filter((h) => h.modelName);
    if (tools.length === 0) return undefined;
    const lines = tools.map((h) => `- ${h.modelName}: ${heldWhy(h)}`);
    return {
      name: 'unavailable tools',
      text: `<unavailable_tools>\nThese tools are disabled until the user reviews them (\`tack pins\`). Do not try to call them; if the task needs one, say so to the user.\n${lines.join('\n')}\n</unavailable_tools>`,
    };
  }
}

function definitionNotice(h: HeldDefinition, status: 'held' | 'accepted') {
  return { server: h.server, kind: h.kind, name: h.name, status, why: h.why };
}
