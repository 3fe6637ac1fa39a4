import type { RuleSet } from '../security/rules.js';
import type { AgentEvent } from './events.js';

/**
 * How calls that need approval are decided when nobody may be asked (headless runs):
 * `ask` asks the approver (the CLI prompt; without one, the call is denied), `auto-read-only` allows the calls
 * whose tool says it is read-only and denies the rest, `never` denies every call that would ask.
 */
export const APPROVE_MODES = ['ask', 'auto-read-only', 'never'] as const;
export type ApproveMode = (typeof APPROVE_MODES)[number];

export interface ApprovalRequest {
  callId: string;
  /** The model-visible tool name. */
  tool: string;
  server?: string;
  description: string;
  /** The full arguments, as the model sent them. */
  arguments: unknown;
  /** The server's read-only hint (a claim unless the server is trusted). */
  readOnlyHint: boolean;
  /** Why this call needs approval, in words. */
  why: string;
}

export interface ApprovalAnswer {
  decision: 'allow' | 'deny';
  /** `session`: the same tool is allowed without asking for the rest of the session. */
  remember?: 'session';
  reason?: string;
}

/** Asks the person running tack (the CLI's prompt, a UI). */
export type Approver = (request: ApprovalRequest) => Promise<ApprovalAnswer>;

/** What the gate needs to know about a tool. */
export interface GatedTool {
  name: string;
  server?: string;
  description: string;
  readOnlyHint: boolean;
  /** The server is marked `trusted` in the configuration: its hints are believed. */
  trustedServer: boolean;
  /** tack's own tools (skills, knowledge, sub-agents) read; they ask only when they say so. */
  native: boolean;
  /** Asks whatever the mode and hints say (skill scripts run code). */
  alwaysAsk?: boolean;
  /** The `ask` rule that made this call ask, for the prompt. */
  askRule?: string;
}

export interface Decision {
  allowed: boolean;
  by: 'policy' | 'user';
  reason: string;
}

/**
 * The approval policy until the security layer's rules land: every MCP tool call asks, except a tool hinted
 * read-only on a server the user marked trusted; every skill script asks; tack's own read-only tools do not.
 * Each decision becomes an `approval` event, so the transcript records who allowed what.
 */
export class ApprovalGate {
  readonly #allowedForSession = new Set<string>();

  constructor(
    readonly mode: ApproveMode,
    readonly approver: Approver | undefined,
    readonly emit: (event: AgentEvent) => void,
    /** tack.json `permissions`: deny, then ask, then allow, before the default policy. */
    readonly rules?: RuleSet,
  ) {}

  async decide(tool: GatedTool, callId: string, args: unknown): Promise<Decision> {
    const decision = await this.#decide(tool, callId, args);
    this.emit({
      type: 'approval',
      callId,
      name: tool.name,
      decision: decision.allowed ? 'allow' : 'deny',
      by: decision.by,
      reason: decision.reason,
    });
    return decision;
  }

  async #decide(tool: GatedTool, callId: string, args: unknown): Promise<Decision> {
    const rule = this.rules?.match(tool.name, args);
    if (rule?.action === 'deny')
      return { allowed: false, by: 'policy', reason: `denied by the rule ${rule.rule}` };
    if (rule?.action === 'allow')
      return { allowed: true, by: 'policy', reason: `allowed by the rule ${rule.rule}` };
    if (rule?.action === 'ask') tool = { ...tool, alwaysAsk: true, askRule: rule.rule };
    if (!tool.alwaysAsk) {
      if (tool.native) return { allowed: true, by: 'policy', reason: "tack's own tool" };
      if (tool.readOnlyHint && tool.trustedServer)
        return { allowed: true, by: 'policy', reason: `read-only on trusted server ${tool.server}` };
    }
    if (this.#allowedForSession.has(tool.name))
      return { allowed: true, by: 'user', reason: 'allowed for this session' };
    const why = tool.askRule
      ? `the rule ${tool.askRule} says to ask`
      : tool.alwaysAsk
        ? 'runs code on this machine'
        : tool.readOnlyHint
          ? `hinted read-only, but ${tool.server} is not marked trusted`
          : 'may change something (not read-only)';
    if (this.mode === 'never') return { allowed: false, by: 'policy', reason: `--approve never: ${why}` };
    if (this.mode === 'auto-read-only')
      return tool.readOnlyHint && !tool.alwaysAsk
        ? { allowed: true, by: 'policy', reason: '--approve auto-read-only: hinted read-only' }
        : { allowed: false, by: 'policy', reason: `--approve auto-read-only: ${why}` };
    if (!this.approver)
      return {
        allowed: false,
        by: 'policy',
        reason: `nobody to ask (${why}); use --approve or run in a terminal`,
      };
    const answer = await this.approver({
      callId,
      tool: tool.name,
      ...(tool.server ? { server: tool.server } : {}),
      description: tool.description,
      arguments: args,
      readOnlyHint: tool.readOnlyHint,
      why,
    });
    if (answer.decision === 'allow' && answer.remember === 'session') this.#allowedForSession.add(tool.name);
    return {
      allowed: answer.decision === 'allow',
      by: 'user',
      reason: answer.reason ?? (answer.decision === 'allow' ? 'approved' : 'denied by the user'),
    };
  }
}
