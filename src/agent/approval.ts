import { errorMessage } from '../errors.js';
import { type CapabilityLabel, hasCapability } from '../security/capabilities.js';
import type { RuleSet } from '../security/rules.js';
import { sha256Hex } from '../util/canonical-json.js';
import type { AgentEvent } from './events.js';

/**
 * How calls that need approval are decided when nobody may be asked (headless runs):
 * `ask` asks the approver (the CLI prompt; without one, the call is denied), `auto-read-only` allows the calls
 * whose tool says it is read-only and denies the rest, `never` denies every call that would ask.
 */
export const APPROVE_MODES = ['ask', 'auto-read-only', 'never'] as const;
/** Who decides a call that must ask: a person, the read-only hint, or nobody (refused). */
export type ApproveMode = (typeof APPROVE_MODES)[number];

/** A tool call put to a person: the tool, its server, its labels, the full arguments and why it asks. */
export interface ApprovalRequest {
  callId: string;
  /** The model-visible tool name. */
  tool: string;
  server?: string;
  description: string;
  /** SHA-256 (hex) of the description, so the user can tell this tool's text from a changed one. */
  descriptionSha256: string;
  /** The full arguments, as the model sent them (the prompt masks secrets when it shows them). */
  arguments: unknown;
  /** The server's read-only hint (a claim unless the server is trusted). */
  readOnlyHint: boolean;
  /** The tool's capability labels with their sources. */
  capabilities: readonly CapabilityLabel[];
  /** Legs its server's enforced sandbox rules out (source `sandbox`), for the prompt to show. */
  ruledOut?: readonly CapabilityLabel[];
  /** Why this call needs approval, in words. */
  why: string;
  /**
   * The rule an "always" answer writes to the user config (`permissions.allow`); absent when always is not
   * offered (skill scripts and egress after untrusted input ask every time).
   */
  alwaysRule?: string;
}

/** An approver's answer: allow or deny, and whether to remember it for the session or always. */
export interface ApprovalAnswer {
  decision: 'allow' | 'deny';
  /**
   * `session`: the same tool is allowed without asking for the rest of the session; `always`: also written to the
   * user config as an allow rule (`alwaysRule`), for every later session.
   */
  remember?: 'session' | 'always';
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
  /** Capability labels (security/capabilities.ts); none for tack's own read-only tools. */
  capabilities?: readonly CapabilityLabel[];
  /** Legs its server's enforced sandbox rules out (source `sandbox`): said in the decision when they matter. */
  ruledOut?: readonly CapabilityLabel[];
  /** A PreToolUse hook allowed this call (its reason): like an allow rule, after deny rules and the guard. */
  hookAllow?: string;
}

export interface Decision {
  allowed: boolean;
  by: 'policy' | 'user' | 'hook';
  reason: string;
  /** Refused because a person would have been asked and none could be (--approve never / auto-read-only, no terminal). */
  unasked?: true;
}

export interface ApprovalGateOptions {
  mode: ApproveMode;
  approver?: Approver | undefined;
  emit: (event: AgentEvent) => void;
  /** tack.json `permissions`: deny, then ask, then allow, before the default policy. */
  rules?: RuleSet | undefined;
  /** Writes an allow rule to the user config (an "always" answer); without it, always acts as session. */
  persistRule?: ((rule: string) => void) | undefined;
  /** The session starts tainted: a sub-agent of a session that has read untrusted input. */
  taintedBy?: string | undefined;
}

/**
 * Who may call what. Rules first (deny, ask, allow); then tack's default: MCP tools ask, except a tool hinted
 * read-only on a server the user marked trusted; skill scripts always ask; tack's own read-only tools do not.
 *
 * The lethal-trifecta guard sits above the rules: once the session has read untrusted input (a result of a tool
 * labelled `untrusted-input`), every call of a tool labelled `egress` asks, whatever a rule or an earlier
 * "always" said, and says why. Text the model read may be steering it; only a person can tell.
 *
 * Each decision becomes an `approval` event, so the transcript records who allowed what.
 */
export class ApprovalGate {
  readonly #allowedForSession = new Set<string>();
  readonly #options: ApprovalGateOptions;
  /** The first tool whose output brought untrusted input into this session. */
  #taintedBy: string | undefined;

  constructor(options: ApprovalGateOptions) {
    this.#options = options;
    this.#taintedBy = options.taintedBy;
  }

  get mode(): ApproveMode {
    return this.#options.mode;
  }

  /** The tool whose result first put untrusted input in the context, once one has. */
  get taintedBy(): string | undefined {
    return this.#taintedBy;
  }

  /** A call ran and its result reached the model: an `untrusted-input` tool taints the session. */
  noteResult(tool: GatedTool): void {
    if (hasCapability(tool.capabilities ?? [], 'untrusted-input')) this.taint(tool.name);
  }

  /** Untrusted input reached the session through `source` (a tool, or a sub-agent that read some). */
  taint(source: string): void {
    if (this.#taintedBy !== undefined) return;
    this.#taintedBy = source;
    this.#options.emit({
      type: 'notice',
      text: `${source} brought untrusted input into this session: from now on every call of a tool that can send data out asks first`,
    });
  }

  /**
   * Decides one call. `approver` asks for this call instead of the gate's own: a front end with several calls in
   * flight (the console) puts each question to the person who made that call, while the session's memory ("allowed
   * for this session", the taint) stays the gate's.
   */
  async decide(tool: GatedTool, callId: string, args: unknown, approver?: Approver): Promise<Decision> {
    const decision = await this.#decide(tool, callId, args, approver ?? this.#options.approver);
    // The guard would have asked but for the sandbox: the record says so, since that is why this call went.
    const ruledOut = tool.ruledOut?.find((l) => l.capability === 'egress');
    if (this.#taintedBy !== undefined && ruledOut && !hasCapability(tool.capabilities ?? [], 'egress'))
      decision.reason += `; the trifecta guard does not ask: the sandbox rules out egress (${ruledOut.why})`;
    this.#options.emit({
      type: 'approval',
      callId,
      name: tool.name,
      decision: decision.allowed ? 'allow' : 'deny',
      by: decision.by,
      reason: decision.reason,
      ...(decision.unasked ? { unasked: true as const } : {}),
    });
    return decision;
  }

  async #decide(
    tool: GatedTool,
    callId: string,
    args: unknown,
    approver: Approver | undefined,
  ): Promise<Decision> {
    const { mode, rules } = this.#options;
    const rule = rules?.match(tool.name, args);
    if (rule?.action === 'deny')
      return { allowed: false, by: 'policy', reason: `denied by the rule ${rule.rule}` };
    const egress = (tool.capabilities ?? []).find((l) => l.capability === 'egress');
    const trifecta =
      this.#taintedBy !== undefined && egress !== undefined
        ? `this session has read untrusted input (from ${this.#taintedBy}) and ${tool.name} can send data out (egress, ${egress.source}: ${egress.why}); an instruction hidden in that input may be steering the model`
        : undefined;
    if (!trifecta) {
      if (tool.hookAllow !== undefined) return { allowed: true, by: 'hook', reason: tool.hookAllow };
      if (rule?.action === 'allow')
        return { allowed: true, by: 'policy', reason: `allowed by the rule ${rule.rule}` };
      if (rule?.action === 'ask') tool = { ...tool, alwaysAsk: true, askRule: rule.rule };
      if (!tool.alwaysAsk) {
        if (tool.native) return { allowed: true, by: 'policy', reason: "tack's own tool" };
        if (tool.readOnlyHint && tool.trustedServer)
          return { allowed: true, by: 'policy', reason: `read-only on trusted server ${tool.server}` };
      }
      // A script allowed "for the session" is asked about again once untrusted input is in the context.
      if (this.#allowedForSession.has(tool.name) && !(tool.alwaysAsk && this.#taintedBy !== undefined))
        return { allowed: true, by: 'user', reason: 'allowed for this session' };
    }
    const why =
      trifecta ??
      (tool.askRule
        ? `the rule ${tool.askRule} says to ask`
        : tool.alwaysAsk
          ? 'runs code on this machine'
          : tool.readOnlyHint
            ? `hinted read-only, but ${tool.server} is not marked trusted`
            : 'may change something (not read-only)');
    if (mode === 'never')
      return { allowed: false, by: 'policy', reason: `--approve never: ${why}`, unasked: true };
    if (mode === 'auto-read-only')
      return tool.readOnlyHint && !tool.alwaysAsk && !trifecta
        ? { allowed: true, by: 'policy', reason: '--approve auto-read-only: hinted read-only' }
        : { allowed: false, by: 'policy', reason: `--approve auto-read-only: ${why}`, unasked: true };
    if (!approver)
      return {
        allowed: false,
        by: 'policy',
        reason: `nobody to ask (${why}); use --approve or run in a terminal`,
        unasked: true,
      };
    // "Always" is offered for MCP tools only: a skill script or an egress call after untrusted input is judged
    // call by call.
    const alwaysRule = !tool.native && !tool.alwaysAsk && !trifecta ? tool.name : undefined;
    const answer = await approver({
      callId,
      tool: tool.name,
      ...(tool.server ? { server: tool.server } : {}),
      description: tool.description,
      descriptionSha256: sha256Hex(tool.description),
      arguments: args,
      readOnlyHint: tool.readOnlyHint,
      capabilities: tool.capabilities ?? [],
      ...(tool.ruledOut?.length ? { ruledOut: tool.ruledOut } : {}),
      why,
      ...(alwaysRule ? { alwaysRule } : {}),
    });
    const allowed = answer.decision === 'allow';
    if (allowed && answer.remember && !trifecta) {
      this.#allowedForSession.add(tool.name);
      if (answer.remember === 'always' && alwaysRule && this.#options.persistRule) {
        try {
          this.#options.persistRule(alwaysRule);
        } catch (error) {
          this.#options.emit({
            type: 'notice',
            text: `could not save "${alwaysRule}" to the user config (${errorMessage(error)}); allowed for this session only`,
          });
        }
      }
    }
    return {
      allowed,
      by: 'user',
      reason:
        answer.reason ??
        (allowed
          ? answer.remember === 'always' && alwaysRule
            ? `approved always (${alwaysRule} saved to the user config)`
            : answer.remember
              ? 'approved for this session'
              : 'approved once'
          : 'denied by the user'),
    };
  }
}
