import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ModelMessage } from 'ai';
import { errorMessage } from '../errors.js';
import { callToolInput } from '../search/meta-tools.js';
import { RuleSet } from '../security/rules.js';
import { inSpan } from '../telemetry/spans.js';
import { estimateTextTokens } from '../tokens/count.js';
import type { SecretMasker } from '../util/secrets.js';
import { ApprovalGate, type Approver } from './approval.js';
import { RUN_CODE } from './code-mode.js';
import type { AgentEvent } from './events.js';
import type { HeldReview } from './held.js';
import { type HooksConfig, hookNotices, runHooks } from './hooks.js';
import type { ApprovalOptions } from './options.js';
import type { SessionTools } from './session-tools.js';
import { CALL_TOOL, SEARCH_TOOLS } from './tool-search.js';
import { type AgentTool, runTool } from './toolset.js';

/** A tool call as the model asked for it (or, later, a script run by a tool). */
export interface ToolCallRequest {
  callId: string;
  /** The model-visible name (`mcp__server__tool`, `activate_skill`, `call_tool`). */
  name: string;
  input: unknown;
  /** The arguments did not parse; `error` says why, in the provider's words. */
  invalid?: boolean;
  error?: unknown;
  /** Set on a call a script made (run_code): the run_code call it belongs to. */
  parentCallId?: string;
}

/** What a call gave, as the model gets it, and how long it took. */
export interface ToolCallResult {
  /** After the output cap. */
  text: string;
  isError: boolean;
  /** The whole output, when it was cut. */
  savedTo?: string;
  /** The tool's own run, without hooks and without the wait for a person; 0 when it did not run. */
  durationMs: number;
  /** How long a person took to approve it, when one was asked. */
  waitMs?: number;
  /**
   * The tool's structured result (MCP `structuredContent`), for a script; left out when its JSON passes the output
   * cap or a hook withheld the result. Never sent to the model or recorded: `text` is what they get.
   */
  structured?: unknown;
}

export interface ToolCallContext {
  signal: AbortSignal;
  /** The step the call belongs to (in its `tool-call` event). */
  step: number;
}

/**
 * The one path of every tool call, native and MCP alike: `tool-call` event, PreToolUse hooks, the approval gate
 * (rules, the trifecta guard, the policy, a person), the run, the taint of an `untrusted-input` result,
 * PostToolUse hooks, the output cap, `tool-result` event. A tool that runs other tools (a script's calls) gets
 * this function, so its calls meet the same hooks, approvals, taint and cap as the model's.
 */
export type RunToolCall = (call: ToolCallRequest, context: ToolCallContext) => Promise<ToolCallResult>;

export interface ToolPipelineOptions {
  sessionId: string;
  /** Where hooks run. */
  cwd: string;
  tools: Pick<SessionTools, 'find' | 'mcp' | 'visible' | 'used'>;
  held: Pick<HeldReview, 'message'>;
  hooks?: HooksConfig | undefined;
  approvals: ApprovalOptions;
  /** The session starts tainted (a sub-agent of a session that had read untrusted input). */
  taintedBy?: string | undefined;
  outputCapTokens: number;
  /** Where outputs over the cap are saved whole. */
  outputsDir: string;
  secrets?: SecretMasker | undefined;
  emit: (event: AgentEvent) => void;
}

interface Outcome {
  text: string;
  isError: boolean;
  durationMs: number;
  structured?: unknown;
  /** Why it did not run (the span's `tack.outcome`); unset when the tool ran. */
  notRun?: 'refused' | 'interrupted';
}

/**
 * A session's tool pipeline (see RunToolCall). It owns the approval gate, and with it the session's taint: once
 * a result of an `untrusted-input` tool reached the session, every egress call asks, whichever path it came by.
 */
export class ToolPipeline {
  readonly #options: ToolPipelineOptions;
  readonly #gate: ApprovalGate;
  /** How long a person took to answer, by call, until its result is out. */
  readonly #waits = new Map<string, number>();

  constructor(options: ToolPipelineOptions) {
    this.#options = options;
    const { mode, approver, permissions, persistRule } = options.approvals;
    this.#gate = new ApprovalGate({
      mode: mode ?? 'ask',
      approver: approver ? this.#timed(approver) : undefined,
      emit: (event) => options.emit(event.type === 'approval' ? this.#withWait(event) : event),
      rules: permissions ? new RuleSet(permissions) : undefined,
      taintedBy: options.taintedBy,
      persistRule,
    });
  }

  /**
   * Runs one call through the whole path; see RunToolCall. Traced as an `execute_tool <tool>` span (GenAI semantic
   * conventions) under the step, or under the run_code call whose script made it; the MCP request is its child.
   */
  readonly run: RunToolCall = (call, { signal, step }) => {
    const tool = this.#options.tools.find(call.name);
    return inSpan(
      `execute_tool ${call.name}`,
      {
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': call.name,
          'gen_ai.tool.call.id': call.callId,
          'tack.upstream.server': tool?.server,
          'tack.step.number': step,
        },
      },
      async (span) => {
        this.#started(call, step, tool);
        let outcome: Outcome;
        try {
          outcome = await this.#through(call, tool, signal, step);
        } catch (error) {
          if (!signal.aborted) throw error;
          // Interrupted (Esc, Ctrl-C) while it ran: the call still gets its result and its event, so the history
          // stays valid for the next run (every tool call answered) and a UI can close the call's block.
          outcome = {
            text: 'Interrupted by the user before it finished.',
            isError: true,
            durationMs: 0,
            notRun: 'interrupted',
          };
        }
        const kind = outcome.notRun ?? (outcome.isError ? 'tool-error' : 'ok');
        span.set({ 'tack.outcome': kind });
        span.outcome(kind);
        return this.#finish(call, outcome);
      },
    );
  };

  /** Answers a call without running it (loop detection's warning), with the same events as a run. */
  refuse(call: ToolCallRequest, { step }: ToolCallContext, text: string): ToolCallResult {
    this.#started(call, step, this.#options.tools.find(call.name));
    return this.#finish(call, { text, isError: true, durationMs: 0 });
  }

  /** The tool whose result first brought untrusted input into this session, once one has. */
  get taintedBy(): string | undefined {
    return this.#gate.taintedBy;
  }

  /** Untrusted input reached the session through `source` (a sub-agent that read some). */
  taint(source: string): void {
    this.#gate.taint(source);
  }

  /**
   * A resumed history still holds the results it read: a result of an `untrusted-input` tool, or of a tool no
   * longer offered (its labels cannot be known), taints the session again.
   */
  taintFromHistory(history: readonly ModelMessage[], known: ReadonlyMap<string, AgentTool>): void {
    // call_tool's result is the named tool's: its name is in the call's arguments.
    const called = new Map<string, string>();
    for (const message of history) {
      if (message.role === 'assistant' && Array.isArray(message.content)) {
        for (const part of message.content)
          if (part.type === 'tool-call' && part.toolName === CALL_TOOL) {
            const name = (part.input as { name?: unknown } | undefined)?.name;
            if (typeof name === 'string') called.set(part.toolCallId, name);
          }
      }
      if (message.role !== 'tool') continue;
      for (const part of message.content) {
        if (part.type !== 'tool-result' || part.toolName === SEARCH_TOOLS) continue;
        if (part.toolName === RUN_CODE) {
          // What a script read is not in the history (its calls were never the model's): assume the worst.
          this.#gate.taint(`${RUN_CODE} (in the resumed history; what its script read is not known now)`);
          return;
        }
        const name = part.toolName === CALL_TOOL ? called.get(part.toolCallId) : part.toolName;
        const tool = name === undefined ? undefined : known.get(name);
        if (tool) this.#gate.noteResult(tool);
        else
          this.#gate.taint(`${name ?? part.toolName} (in the resumed history; its labels are unknown now)`);
        if (this.#gate.taintedBy) return;
      }
    }
  }

  #started(call: ToolCallRequest, step: number, tool: AgentTool | undefined): void {
    const server = tool?.server;
    this.#options.emit({
      type: 'tool-call',
      step,
      callId: call.callId,
      name: call.name,
      arguments: call.input,
      ...(server ? { server } : {}),
      ...(call.parentCallId ? { parentCallId: call.parentCallId } : {}),
    });
  }

  #finish(call: ToolCallRequest, outcome: Outcome): ToolCallResult {
    const { text, savedTo } = this.#cap(call.callId, outcome.text);
    const waitMs = this.#waits.get(call.callId);
    this.#waits.delete(call.callId);
    const result: ToolCallResult = {
      text,
      isError: outcome.isError,
      durationMs: outcome.durationMs,
      ...(waitMs !== undefined ? { waitMs } : {}),
      ...(savedTo ? { savedTo } : {}),
    };
    this.#options.emit({
      type: 'tool-result',
      callId: call.callId,
      name: call.name,
      ...result,
      ...(call.parentCallId ? { parentCallId: call.parentCallId } : {}),
    });
    const structured = outcome.structured;
    if (structured === undefined || savedTo) return result;
    // The structured result goes to a script only within the same cap as the text.
    const json = JSON.stringify(structured);
    return json !== undefined && json.length <= this.#options.outputCapTokens * 4
      ? { ...result, structured }
      : result;
  }

  /** Hooks, approval, the run and the taint; every refusal and failure worded so the model can recover. */
  async #through(
    call: ToolCallRequest,
    tool: AgentTool | undefined,
    signal: AbortSignal,
    step: number,
  ): Promise<Outcome> {
    const refused = (text: string): Outcome => ({ text, isError: true, durationMs: 0, notRun: 'refused' });
    if (tool?.name === CALL_TOOL) return this.#callTool(call, signal, step);
    if (!tool) {
      const held = this.#options.held.message(call.name);
      if (held) return refused(held);
      const names = this.#options.tools.visible().map((t) => t.name);
      return refused(`There is no tool named "${call.name}". Available: ${names.join(', ')}.`);
    }
    if (call.invalid || typeof call.input !== 'object' || call.input === null || Array.isArray(call.input))
      return refused(
        `The arguments for ${call.name} were not a JSON object${call.error ? ` (${errorMessage(call.error)})` : ''}. Send an object that matches the tool's input schema.`,
      );
    const input = call.input as Record<string, unknown>;
    const { hooks, cwd, sessionId } = this.#options;
    const payload = {
      session_id: sessionId,
      tool_name: tool.name,
      tool_input: input,
      tool_use_id: call.callId,
    };
    const pre = await runHooks(hooks, 'PreToolUse', payload, { cwd, signal });
    this.#notices(pre.warnings);
    let allowed: boolean;
    let reason: string;
    if (pre.decision === 'deny') {
      allowed = false;
      reason = pre.reason ?? 'a PreToolUse hook said deny';
      this.#options.emit({
        type: 'approval',
        callId: call.callId,
        name: tool.name,
        decision: 'deny',
        by: 'hook',
        reason,
      });
    } else {
      // A hook's allow counts like an allow rule: deny rules and the trifecta guard still come first.
      const gated =
        pre.decision === 'ask'
          ? { ...tool, alwaysAsk: true }
          : pre.decision === 'allow'
            ? { ...tool, hookAllow: pre.reason ?? 'a PreToolUse hook said allow' }
            : tool;
      ({ allowed, reason } = await this.#gate.decide(gated, call.callId, input));
    }
    if (!allowed)
      return refused(
        `The call to ${tool.name} was not approved (${reason}). Do not retry it unchanged; find another way or ask the user.`,
      );
    this.#options.tools.used(tool);
    const started = performance.now();
    const result = await runTool(tool, input, signal, call.callId, step);
    const durationMs = Math.round(performance.now() - started);
    this.#gate.noteResult(tool);
    const post = await runHooks(
      hooks,
      'PostToolUse',
      { ...payload, tool_response: { text: result.text, isError: result.isError } },
      { cwd, signal },
    );
    this.#notices(post.warnings);
    if (post.decision === 'deny')
      return {
        text: `A hook withheld this result: ${post.reason ?? 'no reason given'}`,
        isError: true,
        durationMs,
      };
    return post.additionalContext.length > 0
      ? { ...result, text: `${result.text}\n\n[hook] ${post.additionalContext.join('\n')}`, durationMs }
      : { ...result, durationMs };
  }

  /** call_tool: the named MCP tool, run now, through the same hooks and approval as a direct call. */
  async #callTool(call: ToolCallRequest, signal: AbortSignal, step: number): Promise<Outcome> {
    const input = callToolInput(call.input as Record<string, unknown> | undefined);
    const refused = (text: string): Outcome => ({ text, isError: true, durationMs: 0, notRun: 'refused' });
    if ('error' in input) return refused(input.error);
    const { name } = input;
    const target = this.#options.tools.mcp().find((t) => t.name === name);
    const held = target ? undefined : this.#options.held.message(name);
    if (held) return refused(held);
    if (!target)
      return refused(
        `${CALL_TOOL}: no tool named "${name}"; find one with ${SEARCH_TOOLS} first and pass its exact name.`,
      );
    return this.#through({ ...call, name, input: input.arguments, invalid: false }, target, signal, step);
  }

  /** Output over the cap is cut for the model; the whole of it is saved in the session folder and named. */
  #cap(callId: string, text: string): { text: string; savedTo?: string } {
    const capChars = this.#options.outputCapTokens * 4;
    if (text.length <= capChars) return { text };
    const dir = this.#options.outputsDir;
    const file = join(dir, `${callId.replace(/[^A-Za-z0-9_-]/g, '_')}.txt`);
    try {
      mkdirSync(dir, { recursive: true });
      writeFileSync(file, this.#options.secrets ? this.#options.secrets.maskText(text) : text);
    } catch (error) {
      return {
        text: `${text.slice(0, capChars)}\n[output cut at ${capChars} characters of ${text.length}; saving the rest failed: ${errorMessage(error)}]`,
      };
    }
    return {
      text: `${text.slice(0, capChars)}\n[output cut at ${capChars} of ${text.length} characters (~${estimateTextTokens(text)} tokens); the whole output is saved in ${file}]`,
      savedTo: file,
    };
  }

  /** The approver, announced (`approval-request`) and timed: the wait for a person is not the tool's time. */
  #timed(approver: Approver): Approver {
    return async (request) => {
      this.#options.emit({
        type: 'approval-request',
        callId: request.callId,
        name: request.tool,
        ...(request.server ? { server: request.server } : {}),
        why: request.why,
      });
      const asked = performance.now();
      try {
        return await approver(request);
      } finally {
        this.#waits.set(request.callId, Math.round(performance.now() - asked));
      }
    };
  }

  #withWait(event: Extract<AgentEvent, { type: 'approval' }>): AgentEvent {
    const waitMs = this.#waits.get(event.callId);
    return waitMs === undefined ? event : { ...event, waitMs };
  }

  #notices(warnings: readonly string[]): void {
    for (const notice of hookNotices(warnings)) this.#options.emit(notice);
  }
}
