import type { ModelMessage } from 'ai';

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

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  /** Input tokens the provider served from its prompt cache, when it says. */
  cachedInputTokens: number;
  costUsd: number;
}

/**
 * Everything a session does, in order. The transcript is these events as JSON lines, one write per event, so a
 * crash loses nothing written before it; `message` events hold the exact history, so a session can be resumed
 * from its transcript alone. The CLI renders the same events live.
 */
export type AgentEvent =
  | {
      type: 'session-start';
      sessionId: string;
      model: string;
      cwd: string;
      /** sha256 of the exact guidelines text the session ran with, and where its layers came from. */
      guidelinesHash: string;
      guidelinesSources: string[];
      resumedFrom?: string;
      /** Set on a sub-agent's session: the parent's id and the tool call that started it. */
      parent?: { sessionId: string; callId: string };
    }
  /** A message appended to the history, exactly as sent to the model on later turns. */
  | { type: 'message'; message: ModelMessage }
  /** Streamed answer text (UI only: the full text arrives in the next `message`; not written to transcripts). */
  | { type: 'text-delta'; text: string }
  | { type: 'step-start'; step: number; tools: number }
  | {
      type: 'tool-call';
      step: number;
      callId: string;
      /** The model-visible name (`mcp__server__tool`, `activate_skill`). */
      name: string;
      arguments: unknown;
      server?: string;
    }
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
    }
  | {
      type: 'tool-result';
      callId: string;
      name: string;
      isError: boolean;
      /** What the model gets (after the output cap). */
      text: string;
      /** The full output, when it was cut for the model. */
      savedTo?: string;
      durationMs: number;
    }
  | { type: 'usage'; step: number; stepUsage: Usage; total: Usage }
  | {
      type: 'compaction';
      tokensBefore: number;
      tokensAfter: number;
      elidedToolResults: number;
      summarizedMessages: number;
      /** The whole history after compaction: resume starts from the last one of these. */
      messages: ModelMessage[];
    }
  | { type: 'notice'; text: string }
  | { type: 'error'; message: string; code?: string }
  | { type: 'session-end'; reason: EndReason; detail: string; answer?: string; total: Usage; steps: number };

export type AgentEventType = AgentEvent['type'];

export const ZERO_USAGE: Usage = { inputTokens: 0, outputTokens: 0, cachedInputTokens: 0, costUsd: 0 };
