import type { ModelMessage } from 'ai';
import type { PinKind } from '../security/pins.js';
import type { RecordedBody } from './request-record.js';

/** Why a run ended. `completed`: the model answered without calling a tool. */
export type EndReason =
  | 'completed'
  | 'max-steps'
  | 'max-input-tokens'
  | 'max-output-tokens'
  | 'max-cost'
  | 'wall-time'
  | 'loop'
  | 'aborted'
  | 'error';

/** Tokens and cost, of a step or a run. */
export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the provider served from its prompt cache (counted in `inputTokens` too), when it says. */
  cachedInputTokens: number;
  /**
   * Input tokens the provider wrote to its prompt cache (counted in `inputTokens` too; Anthropic bills them
   * above the input price). Absent when none were.
   */
  cacheWriteTokens?: number;
  costUsd: number;
}

/** A held-back server definition a notice is about (security/pins.ts): what it is, and what became of it. */
export interface DefinitionNotice {
  server: string;
  kind: PinKind;
  /** The server's own name for it; empty for instructions. */
  name: string;
  /** `held`: left out of the session until reviewed; `accepted`: the reviewer took it, offered from now on. */
  status: 'held' | 'accepted';
  /** Why it was held: it `changed` since it was approved, or the scan `flagged` it. */
  why: 'changed' | 'flagged';
}

/**
 * Everything a session does, in order: the one interface the CLI (`tack run`, `tack chat`, `--json`), a UI and
 * the transcript consume. The transcript is these events as JSON lines, one write per event, so a crash loses
 * nothing written before it; `message` events hold the exact history, so a session can be resumed from its
 * transcript alone. Each member says when it fires and what it carries.
 */
export type AgentEvent =
  /** Once, when the session is created (and again on resume): what it runs with. */
  | {
      type: 'session-start';
      sessionId: string;
      model: string;
      /** The fallback models, in order (`agent.fallback`, `--fallback`), when there are any. */
      fallback?: string[];
      cwd: string;
      /** sha256 of the exact guidelines text the session ran with, and where its layers came from. */
      guidelinesHash: string;
      guidelinesSources: string[];
      resumedFrom?: string;
      /** Set on a sub-agent's session: the parent's id and the tool call that started it. */
      parent?: { sessionId: string; callId: string };
      /**
       * The process running the session and its machine: a reader (the console) tells a session still running
       * from one whose process died before it could write its end (SIGKILL, a crash, a power cut).
       */
      pid?: number;
      hostname?: string;
    }
  /**
   * A message appended to the history (the user's, the model's, the tool results), exactly as sent later to a
   * provider of the same kind (another one gets a few parts converted: provider-history.ts).
   */
  | { type: 'message'; message: ModelMessage }
  /** Streamed answer text (UI only: the full text arrives in the next `message`; not written to transcripts). */
  | { type: 'text-delta'; text: string }
  /**
   * Before each model call: its number in the run, how many tools it offers, and the hash of the prefix it
   * sends before the history (system prompt and tool definitions, prompt-cache.ts): equal from step to step
   * while the provider can serve that prefix from its cache.
   */
  | { type: 'step-start'; step: number; tools: number; prefixHash?: string }
  /** A tool call starts, before hooks and approval: the call as the model asked for it. */
  | {
      type: 'tool-call';
      step: number;
      callId: string;
      /** The model-visible name (`mcp__server__tool`, `activate_skill`). */
      name: string;
      arguments: unknown;
      server?: string;
      /** Set on a call a script made through run_code: the run_code call it is nested under. */
      parentCallId?: string;
    }
  /** A person is about to be asked to approve a call (the prompt opens); `approval` follows with the answer. */
  | {
      type: 'approval-request';
      callId: string;
      name: string;
      server?: string;
      /** Why it asks, in words (the same words the prompt shows). */
      why: string;
    }
  /** A call was allowed or denied, by whom and why: after a hook, a rule, the policy or a person decided. */
  | {
      type: 'approval';
      callId: string;
      name: string;
      decision: 'allow' | 'deny';
      /** Who decided: the policy (mode, read-only trusted server), the user at a prompt, or a hook. */
      by: 'policy' | 'user' | 'hook';
      reason: string;
      /** A person would have been asked, and none could be: headless, or --approve never / auto-read-only. */
      unasked?: true;
      /** A person was asked: how long they took to answer, in milliseconds. */
      waitMs?: number;
    }
  /** A tool call ended (run, refused or failed): what the model gets. */
  | {
      type: 'tool-result';
      callId: string;
      name: string;
      isError: boolean;
      /** What the model gets (after the output cap). */
      text: string;
      /** The full output, when it was cut for the model. */
      savedTo?: string;
      /** The tool's own run, without hooks and without the wait for a person; 0 when it did not run. */
      durationMs: number;
      /** How long a person took to approve it, when one was asked. */
      waitMs?: number;
      /** Set on a call a script made through run_code: the run_code call it is nested under. */
      parentCallId?: string;
    }
  /**
   * After each model call: that step's tokens and cost, and the session's running totals. `model` is the
   * `provider:id` that ran the step, whose prices the cost is at (absent in transcripts older than fallback).
   */
  | { type: 'usage'; step: number; stepUsage: Usage; total: Usage; model?: string }
  /**
   * What one model call sent, recorded so that it can be rebuilt byte for byte (request-record.ts): written after
   * the call ends, before its `usage`. `outcome` failed: the call failed (the body of its last attempt); a
   * fallback's call of the same step follows as another `request`.
   */
  | ({ type: 'request'; step: number; model: string; outcome: 'answered' | 'failed' } & RecordedBody)
  /**
   * A step's model call failed after its retries with an error another provider may not have (overload, rate
   * limit, server error, no connection): the step is sent again to the next model of `agent.fallback`, which
   * runs the rest of the run. `reason` is the failure, in words.
   */
  | { type: 'model-fallback'; step: number; from: string; to: string; reason: string }
  /** The history was compacted (near the context limit, or `/compact`). */
  | {
      type: 'compaction';
      tokensBefore: number;
      tokensAfter: number;
      elidedToolResults: number;
      summarizedMessages: number;
      /** The whole history after compaction: resume starts from the last one of these. */
      messages: ModelMessage[];
    }
  /**
   * The `task` tool started a sub-agent: its session id, and the call of this session it answers. Its own
   * events follow as `subagent` events, then `subagent-end`.
   */
  | {
      type: 'subagent-start';
      callId: string;
      sessionId: string;
      /** A few words for the user: what it does (the model's `description`, else the prompt's first line). */
      description: string;
      /** The tool patterns it may use; absent: every tool but `task`. */
      tools?: string[];
      maxSteps: number;
    }
  /**
   * One event of a running sub-agent, nested under the call that started it (its steps, tool calls, approvals,
   * results, usage, notices and errors; its messages and streamed text stay in the sub-agent).
   */
  | { type: 'subagent'; callId: string; sessionId: string; event: SubagentEvent }
  /** The sub-agent ended: why, after how many steps, and what it used (counted in this session's totals too). */
  | {
      type: 'subagent-end';
      callId: string;
      sessionId: string;
      reason: EndReason;
      detail: string;
      steps: number;
      usage: Usage;
    }
  /**
   * Something the user should know, in words: set-up warnings, the trifecta flag, taint, hook warnings, an
   * unknown price. `definition` is set when it is about a held-back server definition (held, or accepted).
   */
  | { type: 'notice'; text: string; definition?: DefinitionNotice }
  /** Something failed that the run survives (compaction) or ends with (the model call: `MODEL_FAILED`). */
  | { type: 'error'; message: string; code?: string }
  /** A run ended: why, the answer when there is one, the steps of this run and the session's totals. */
  | { type: 'session-end'; reason: EndReason; detail: string; answer?: string; total: Usage; steps: number };

export type AgentEventType = AgentEvent['type'];

/** The events of a sub-agent passed up nested in `subagent` events. */
export const SUBAGENT_EVENT_TYPES = [
  'step-start',
  'tool-call',
  'approval-request',
  'approval',
  'tool-result',
  'usage',
  'model-fallback',
  'notice',
  'error',
] as const satisfies readonly AgentEventType[];

export type SubagentEvent = Extract<AgentEvent, { type: (typeof SUBAGENT_EVENT_TYPES)[number] }>;

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
