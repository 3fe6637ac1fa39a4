import { errorMessage } from '../errors.js';
import type { NativeTool } from '../tools/native.js';
import {
  type AgentEvent,
  SUBAGENT_EVENT_TYPES,
  type SubagentEvent,
  type Usage,
  ZERO_USAGE,
} from './events.js';
import type { Guidelines } from './guidelines.js';
import type { AgentOptions, Limits, RunResult } from './options.js';
import { newSessionId } from './transcript.js';

export const SUBAGENT_TOOL = 'task';

/** What a child session needs of the session class (injected: the class imports this file). */
export interface ChildSession {
  run(task: string, options?: { signal?: AbortSignal }): Promise<RunResult>;
  readonly taintedBy: string | undefined;
}

/** What the `task` tool needs of the session that offers it. */
export interface SubagentParent {
  sessionId: string;
  /** The parent's options: the child inherits its model, host, tools, approvals, hooks and record settings. */
  options: AgentOptions;
  guidelines: Guidelines;
  limits: Limits;
  /** The parent's taint (the guard follows the data both ways), and a way to add to it. */
  taintedBy(): string | undefined;
  taint(source: string): void;
  /** The child's usage counts toward the parent's. */
  addUsage(usage: Usage): void;
  emit(event: AgentEvent): void;
  create(options: AgentOptions): Promise<ChildSession>;
}

const SUBAGENT_EVENTS: ReadonlySet<string> = new Set(SUBAGENT_EVENT_TYPES);

/**
 * The `task` tool: a child session with a fresh context (only the prompt), a subset of the tools (never `task`
 * itself) and its own step limit; it returns only the child's final answer. The child's events come up nested
 * (`subagent-start`, `subagent`, `subagent-end`), its usage counts toward the parent's, and taint follows the
 * data: a child of a tainted session starts tainted, and a child that read untrusted input taints the parent.
 */
export function subagentTool(parent: SubagentParent): NativeTool {
  return {
    name: SUBAGENT_TOOL,
    description:
      'Hand a self-contained sub-task to a sub-agent with a fresh context: it sees only your prompt, works with ' +
      'the tools you allow, and returns only its final answer. Use it for research or side work whose ' +
      'intermediate steps would clutter your context.',
    inputSchema: {
      type: 'object',
      properties: {
        description: { type: 'string', description: 'A few words for the user: what the sub-agent does' },
        prompt: {
          type: 'string',
          description: 'The complete task, with everything the sub-agent needs to know',
        },
        tools: {
          type: 'array',
          items: { type: 'string' },
          description:
            'Tool names it may use (`*` matches any run, e.g. mcp__github__*); default: all but task',
        },
        max_steps: { type: 'integer', minimum: 1, maximum: 50, description: 'Its step limit (default 20)' },
      },
      required: ['prompt'],
      additionalProperties: false,
    },
    // Its own labels: none. What the child's tools can do is judged call by call by the child's own gate, and what
    // it read comes back as taint (below).
    capabilities: [],
    execute: async (input, context) => {
      const prompt = typeof input.prompt === 'string' ? input.prompt : '';
      if (!prompt) return { text: 'task: "prompt" must be a non-empty string', isError: true };
      const patterns = Array.isArray(input.tools)
        ? input.tools.filter((t): t is string => typeof t === 'string')
        : undefined;
      const allowed = patterns?.map(
        (p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`),
      );
      const parentFilter = parent.options.toolFilter;
      const maxSteps =
        typeof input.max_steps === 'number' ? Math.min(50, Math.max(1, Math.trunc(input.max_steps))) : 20;
      const callId = context?.callId ?? SUBAGENT_TOOL;
      const sessionId = newSessionId();
      const { resume: _resume, parent: _parent, ...inherited } = parent.options;
      const nest = (event: AgentEvent) => {
        if (SUBAGENT_EVENTS.has(event.type))
          parent.emit({ type: 'subagent', callId, sessionId, event: event as SubagentEvent });
      };
      parent.emit({
        type: 'subagent-start',
        callId,
        sessionId,
        description:
          typeof input.description === 'string' && input.description ? input.description : firstLine(prompt),
        ...(patterns ? { tools: patterns } : {}),
        maxSteps,
      });
      const end = (result: Pick<RunResult, 'reason' | 'detail' | 'steps' | 'usage'>) =>
        parent.emit({ type: 'subagent-end', callId, sessionId, ...pick(result) });
      let result: RunResult;
      let child: ChildSession;
      try {
        const taintedBy = parent.taintedBy();
        child = await parent.create({
          ...inherited,
          guidelines: parent.guidelines,
          sessionId,
          parent: { sessionId: parent.sessionId, callId, ...(taintedBy ? { taintedBy } : {}) },
          limits: { ...parent.limits, maxSteps },
          transcript: false,
          subagents: false,
          toolFilter: (name) =>
            name !== SUBAGENT_TOOL &&
            (parentFilter ? parentFilter(name) : true) &&
            (allowed ? allowed.some((r) => r.test(name)) : true),
          onEvent: nest,
        });
        result = await child.run(prompt, context?.signal ? { signal: context.signal } : {});
      } catch (error) {
        end({ reason: 'error', detail: errorMessage(error), steps: 0, usage: ZERO_USAGE });
        throw error;
      }
      parent.addUsage(result.usage);
      end(result);
      if (child.taintedBy) parent.taint(`${SUBAGENT_TOOL} (${child.taintedBy})`);
      if (result.reason === 'completed') return { text: result.answer ?? '' };
      return {
        text: `The sub-agent stopped without an answer: ${result.reason} (${result.detail}).`,
        isError: true,
      };
    },
  };
}

function pick({ reason, detail, steps, usage }: Pick<RunResult, 'reason' | 'detail' | 'steps' | 'usage'>) {
  return { reason, detail, steps, usage };
}

function firstLine(text: string): string {
  const line = text.trim().split('\n')[0] ?? '';
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}
