import type { ModelMessage } from 'ai';
import type { AgentEvent, EndReason, SubagentEvent, Usage } from '../agent/events.js';
import { ACTIVATE_SKILL } from '../skills/tools.js';
import { estimateTextTokens } from '../tokens/count.js';

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
  | { kind: 'notice'; id: number; text: string; tone: 'info' | 'held' | 'compaction' | 'fallback' }
  | { kind: 'error'; id: number; text: string }
  | { kind: 'end'; id: number; reason: EndReason; detail: string }
  | { kind: 'output'; id: number; title: string; text: string }
  /** The first screen's header: the working folder and where to start. */
  | { kind: 'intro'; id: number; folder: string }
  /** Notes the session gave while it started (no price for the model, the trifecta), shown as one line. */
  | { kind: 'notes'; id: number; notes: string[] };

/** The status line's figures, all from the session's own events. */
export interface StatusFigures {
  model: string;
  sessionId: string;
  /** Input tokens of the last model call: what the context holds now (after compaction, its estimate). */
  contextTokens: number;
  inputTokens: number;
  outputTokens: number;
  /** Of `inputTokens`, those the provider read from its prompt cache. */
  cachedInputTokens: number;
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
      case 'model-fallback':
        this.closeAnswer();
        this.add({
          kind: 'notice',
          id: this.#nextId(),
          tone: 'fallback',
          text: `${event.from} failed (${event.reason}); step ${event.step} goes to ${event.to}`,
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
  /** Tool calls of a history being replayed, until their results are found. */
  readonly #historyCalls = new Map<string, ToolCallView>();
  readonly status: StatusFigures;
  /** Bumped on every change, so a renderer can tell a new state from the one it drew. */
  version = 0;
  /** The session's own model while a run is on a fallback (the status line names the fallback until the end). */
  #ownModel: string | undefined;
  /** Until started(): plain notices are the session's start notes, folded into one line (see startNotes). */
  #starting = true;
  #notes: Extract<ViewItem, { kind: 'notes' }> | undefined;
  /** Every note given at start, for /status (the line on screen goes to the scrollback with the first turn). */
  readonly startNotes: string[] = [];
  /** The turn in flight: when it started, the session's tokens then, and answer text streamed since the last usage. */
  #turn: { startedAt: number; tokensBefore: number; streamedTokens: number } | undefined;
  readonly #listeners = new Set<() => void>();

  constructor(model = '', sessionId = '') {
    this.#root = new ItemList([], () => ++this.#id);
    this.status = {
      model,
      sessionId,
      contextTokens: 0,
      inputTokens: 0,
      outputTokens: 0,
      cachedInputTokens: 0,
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

  /** The first screen's header, before anything else is drawn. */
  intro(folder: string): void {
    this.#root.add({ kind: 'intro', id: ++this.#id, folder });
    this.changed();
  }

  /** The session has started: its notices from now on are shown in place, one item each. */
  started(): void {
    this.#starting = false;
  }

  /** A start note: the first one adds the one-line item, the next ones join it. */
  #startNote(text: string): void {
    this.startNotes.push(text);
    if (this.#notes && this.#root.items.includes(this.#notes)) this.#notes.notes.push(text);
    else {
      this.#notes = { kind: 'notes', id: ++this.#id, notes: [text] };
      this.#root.add(this.#notes);
    }
  }

  /** A turn starts now: the running line counts its time and tokens from here. */
  beginTurn(now = Date.now()): void {
    this.#turn = {
      startedAt: now,
      tokensBefore: this.status.inputTokens + this.status.outputTokens,
      streamedTokens: 0,
    };
  }

  endTurn(): void {
    this.#turn = undefined;
  }

  /**
   * The turn in flight: seconds since it started and its tokens so far (input and output of the steps done, and
   * the answer streaming now by the estimate (tokens/count.ts), until its step's usage arrives).
   */
  turnProgress(now = Date.now()): { seconds: number; tokens: number } | undefined {
    const turn = this.#turn;
    if (!turn) return undefined;
    const counted = this.status.inputTokens + this.status.outputTokens - turn.tokensBefore;
    return {
      seconds: Math.max(0, Math.floor((now - turn.startedAt) / 1000)),
      tokens: Math.max(0, counted) + turn.streamedTokens,
    };
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

  /**
   * A resumed session's earlier turns, from its history (what the model will see): each user message, answer and
   * tool call (folded, with its result) in order. Only the last MAX_ITEMS are kept, as for a live session.
   */
  history(messages: readonly ModelMessage[], usage?: Usage): void {
    const root = this.#root;
    for (const message of messages) {
      if (message.role === 'user') {
        const text = messageText(message.content);
        if (text !== '') root.add({ kind: 'user', id: ++this.#id, text });
      } else if (message.role === 'assistant') {
        const parts =
          typeof message.content === 'string'
            ? [{ type: 'text' as const, text: message.content }]
            : message.content;
        for (const part of parts) {
          if (part.type === 'text' && part.text.trim() !== '')
            root.add({ kind: 'answer', id: ++this.#id, text: part.text, done: true });
          else if (part.type === 'tool-call') {
            const call: ToolCallView = {
              callId: part.toolCallId,
              name: part.toolName,
              ...serverOf(part.toolName),
              arguments: part.input,
              status: 'ok',
            };
            this.#historyCalls.set(part.toolCallId, call);
            root.add({ kind: 'tool', id: ++this.#id, call });
          }
        }
      } else if (message.role === 'tool') {
        for (const part of message.content) {
          if (part.type !== 'tool-result') continue;
          const call = this.#historyCalls.get(part.toolCallId);
          if (!call) continue;
          const output = part.output;
          const text =
            output.type === 'text' || output.type === 'error-text'
              ? output.value
              : output.type === 'json' || output.type === 'error-json'
                ? JSON.stringify(output.value)
                : output.type === 'execution-denied'
                  ? (output.reason ?? 'denied')
                  : '';
          if (output.type === 'error-text' || output.type === 'error-json') call.status = 'error';
          if (output.type === 'execution-denied') call.status = 'denied';
          const result = unwrapResult(text);
          call.result =
            result.length > MAX_RESULT_CHARS
              ? `${result.slice(0, MAX_RESULT_CHARS)}\n… (cut in this view)`
              : result;
        }
      }
    }
    this.#historyCalls.clear();
    if (usage)
      Object.assign(this.status, {
        inputTokens: usage.inputTokens,
        outputTokens: usage.outputTokens,
        cachedInputTokens: usage.cachedInputTokens,
        costUsd: usage.costUsd,
      });
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
        // The estimate every count without a tokenizer takes (a word cut between two deltas counts twice: a live figure).
        if (this.#turn) this.#turn.streamedTokens += estimateTextTokens(event.text);
        break;
      case 'notice':
        // Held definitions always stand on their own line: they ask for a decision.
        if (this.#starting && !event.definition) this.#startNote(event.text);
        else root.apply(event);
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
        if (this.#turn) this.#turn.streamedTokens = 0;
        Object.assign(this.status, {
          contextTokens: event.stepUsage.inputTokens,
          inputTokens: event.total.inputTokens,
          outputTokens: event.total.outputTokens,
          cachedInputTokens: event.total.cachedInputTokens,
          costUsd: event.total.costUsd,
        });
        break;
      case 'model-fallback':
        // The status line names the model answering now, until the run ends (the next starts on the session's own).
        this.#ownModel ??= this.status.model;
        this.status.model = event.to;
        root.apply(event);
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
        if (this.#ownModel !== undefined) this.status.model = this.#ownModel;
        this.#ownModel = undefined;
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

/** The text a person typed in a user message (attached files and images are not shown). */
function messageText(content: Extract<ModelMessage, { role: 'user' }>['content']): string {
  if (typeof content === 'string') return content.trim();
  return content
    .map((part) => (part.type === 'text' ? part.text : ''))
    .join('')
    .trim();
}

/** `mcp__server__tool` names carry their server; tack's own tools have none. */
function serverOf(name: string): { server?: string } {
  const match = /^mcp__(.+?)__./.exec(name);
  return match ? { server: match[1]! } : {};
}
