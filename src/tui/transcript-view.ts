import type { AgentEvent, EndReason, SubagentEvent } from '../agent/events.js';
import { ACTIVATE_SKILL } from '../skills/tools.js';

/** What a tool call block shows: folded, one line; expanded, its arguments and result too. */
export interface ToolCallView {
  callId: string;
  /** The model-visible name (`mcp__server__tool`, `activate_skill`). */
  name: string;
  server?: string;
  arguments: unknown;
  status: 'running' | 'waiting' | 'ok' | 'error' | 'denied';
  /** The tool's own run (the wait for a person is not in it: the library measures from the approval's end). */
  durationMs?: number;
  /** How long a person took to approve it. */
  waitMs?: number;
  /** Why it asked, while waiting; why it was refused, once denied. */
  why?: string;
  /** The result as the model got it, without tack's `<tool_result>` wrapper. */
  result?: string;
  savedTo?: string;
  /** A `task` call's sub-agent: its own items, nested under the call. */
  subagent?: {
    sessionId: string;
    description: string;
    items: ViewItem[];
    reason?: EndReason;
    detail?: string;
  };
}

export type ViewItem =
  | { kind: 'user'; id: number; text: string }
  | { kind: 'answer'; id: number; text: string; done: boolean }
  | { kind: 'tool'; id: number; call: ToolCallView }
  | { kind: 'notice'; id: number; text: string; tone: 'info' | 'held' | 'compaction' }
  | { kind: 'error'; id: number; text: string }
  | { kind: 'end'; id: number; reason: EndReason; detail: string }
  | { kind: 'output'; id: number; title: string; text: string };

/** The status line's figures, all from the session's own events. */
export interface StatusFigures {
  model: string;
  sessionId: string;
  /** Input tokens of the last model call: what the context holds now (after compaction, its estimate). */
  contextTokens: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** Skills activated this session (successful `activate_skill` calls). */
  activeSkills: string[];
}

/** Items kept in the transcript view; older ones scroll into the terminal's own scrollback, then are dropped. */
export const MAX_ITEMS = 500;
/** A result longer than this is cut in the view (the full output stays where the library saved it). */
export const MAX_RESULT_CHARS = 20_000;

/** Strips the `<tool_result ...>` wrapper the model sees (agent/toolset.ts wrapResult), and unescapes its end tag. */
export function unwrapResult(text: string): string {
  const match = /^<tool_result[^>]*>\n?([\s\S]*?)\n?<\/tool_result>\s*$/.exec(text);
  const inner = match ? match[1]! : text;
  return inner.replace(/<\\\/tool_result/gi, '</tool_result');
}

/**
 * The transcript as the TUI shows it, folded from the session's events (events.ts): the TUI is a client of those
 * events and nothing else. One list per session; a sub-agent's events fold into a nested list under its call.
 */
class ItemList {
  readonly items: ViewItem[];
  readonly #calls = new Map<string, ToolCallView>();
  readonly #nextId: () => number;
  #open: Extract<ViewItem, { kind: 'answer' }> | undefined;

  constructor(items: ViewItem[], nextId: () => number) {
    this.items = items;
    this.#nextId = nextId;
  }

  call(callId: string): ToolCallView | undefined {
    return this.#calls.get(callId);
  }

  add(item: ViewItem): void {
    this.items.push(item);
    if (this.items.length > MAX_ITEMS) this.items.splice(0, this.items.length - MAX_ITEMS);
  }

  closeAnswer(): void {
    if (this.#open) this.#open.done = true;
    this.#open = undefined;
  }

  text(delta: string): void {
    if (!this.#open) {
      this.#open = { kind: 'answer', id: this.#nextId(), text: '', done: false };
      this.add(this.#open);
    }
    this.#open.text += delta;
  }

  apply(event: AgentEvent | SubagentEvent): void {
    switch (event.type) {
      case 'tool-call': {
        this.closeAnswer();
        const call: ToolCallView = {
          callId: event.callId,
          name: event.name,
          ...(event.server ? { server: event.server } : {}),
          arguments: event.arguments,
          status: 'running',
        };
        this.#calls.set(event.callId, call);
        this.add({ kind: 'tool', id: this.#nextId(), call });
        return;
      }
      case 'approval-request': {
        const call = this.#calls.get(event.callId);
        if (call) Object.assign(call, { status: 'waiting', why: event.why });
        return;
      }
      case 'approval': {
        const call = this.#calls.get(event.callId);
        if (!call) return;
        if (event.decision === 'deny') Object.assign(call, { status: 'denied', why: event.reason });
        else call.status = 'running';
        return;
      }
      case 'tool-result': {
        const call = this.#calls.get(event.callId);
        if (!call) return;
        if (call.status !== 'denied') call.status = event.isError ? 'error' : 'ok';
        call.durationMs = event.durationMs;
        if (event.waitMs !== undefined) call.waitMs = event.waitMs;
        const result = unwrapResult(event.text);
        call.result =
          result.length > MAX_RESULT_CHARS
            ? `${result.slice(0, MAX_RESULT_CHARS)}\n… (cut in this view)`
            : result;
        if (event.savedTo) call.savedTo = event.savedTo;
        return;
      }
      case 'notice':
        this.add({
          kind: 'notice',
          id: this.#nextId(),
          text: event.text,
          tone: event.definition ? 'held' : 'info',
        });
        return;
      case 'error':
        this.closeAnswer();
        this.add({ kind: 'error', id: this.#nextId(), text: event.message });
        return;
      default:
        return;
    }
  }
}

export class TranscriptView {
  #id = 0;
  readonly #root: ItemList;
  readonly #subagents = new Map<string, ItemList>();
  readonly #skillCalls = new Map<string, string>();
  readonly status: StatusFigures;
  /** Bumped on every change, so a renderer can tell a new state from the one it drew. */
  version = 0;
  readonly #listeners = new Set<() => void>();

  constructor(model = '', sessionId = '') {
    this.#root = new ItemList([], () => ++this.#id);
    this.status = {
      model,
      sessionId,
      contextTokens: 0,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      activeSkills: [],
    };
  }

  get items(): readonly ViewItem[] {
    return this.#root.items;
  }

  call(callId: string): ToolCallView | undefined {
    return this.#root.call(callId);
  }

  /** The newest tool call, for the expand key. */
  lastCall(): ToolCallView | undefined {
    for (let i = this.#root.items.length - 1; i >= 0; i--) {
      const item = this.#root.items[i]!;
      if (item.kind === 'tool') return item.call;
    }
    return undefined;
  }

  subscribe(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  changed(): void {
    this.version++;
    for (const listener of this.#listeners) listener();
  }

  /** A user's message, as typed (the session records it as a `message`; the view shows it at once). */
  user(text: string): void {
    this.#root.closeAnswer();
    this.#root.add({ kind: 'user', id: ++this.#id, text });
    this.changed();
  }

  /** Output of a slash command, in place in the transcript. */
  output(title: string, text: string): void {
    this.#root.add({ kind: 'output', id: ++this.#id, title, text });
    this.changed();
  }

  notice(text: string): void {
    this.#root.add({ kind: 'notice', id: ++this.#id, text, tone: 'info' });
    this.changed();
  }

  /** Removes the items shown so far and returns them (the TUI writes them to the scrollback once). */
  takeItems(): ViewItem[] {
    this.#root.closeAnswer();
    return this.#root.items.splice(0);
  }

  clear(): void {
    this.#root.items.splice(0);
    this.changed();
  }

  apply(event: AgentEvent): void {
    const root = this.#root;
    switch (event.type) {
      case 'session-start':
        if (!event.parent) Object.assign(this.status, { model: event.model, sessionId: event.sessionId });
        break;
      case 'text-delta':
        root.text(event.text);
        break;
      case 'message':
        if (event.message.role === 'assistant') root.closeAnswer();
        break;
      case 'tool-call':
        if (event.name === ACTIVATE_SKILL) {
          const name = (event.arguments as { name?: unknown } | null)?.name;
          if (typeof name === 'string') this.#skillCalls.set(event.callId, name);
        }
        root.apply(event);
        break;
      case 'tool-result': {
        const skill = this.#skillCalls.get(event.callId);
        if (skill && !event.isError && !this.status.activeSkills.includes(skill))
          this.status.activeSkills.push(skill);
        root.apply(event);
        break;
      }
      case 'usage':
        Object.assign(this.status, {
          contextTokens: event.stepUsage.inputTokens,
          inputTokens: event.total.inputTokens,
          outputTokens: event.total.outputTokens,
          costUsd: event.total.costUsd,
        });
        break;
      case 'compaction':
        this.status.contextTokens = event.tokensAfter;
        root.add({
          kind: 'notice',
          id: ++this.#id,
          tone: 'compaction',
          text: `compacted the history: ${event.tokensBefore} → ${event.tokensAfter} tokens (${event.elidedToolResults} tool outputs elided, ${event.summarizedMessages} messages summarised)`,
        });
        break;
      case 'subagent-start': {
        const call = root.call(event.callId);
        const items: ViewItem[] = [];
        if (call) call.subagent = { sessionId: event.sessionId, description: event.description, items };
        this.#subagents.set(event.callId, new ItemList(items, () => ++this.#id));
        break;
      }
      case 'subagent':
        this.#subagents.get(event.callId)?.apply(event.event);
        break;
      case 'subagent-end': {
        const sub = root.call(event.callId)?.subagent;
        if (sub) Object.assign(sub, { reason: event.reason, detail: event.detail });
        this.#subagents.delete(event.callId);
        break;
      }
      case 'session-end':
        root.closeAnswer();
        this.status.costUsd = event.total.costUsd;
        if (event.reason !== 'completed')
          root.add({ kind: 'end', id: ++this.#id, reason: event.reason, detail: event.detail });
        break;
      default:
        root.apply(event);
    }
    this.changed();
  }
}
