import type { ModelMessage } from 'ai';
import type { TackConfig } from '../config/load.js';
import type { KnowledgeBase } from '../knowledge/knowledge.js';
import type { ComputationRuntimes } from '../knowledge/runtimes.js';
import type { McpHost } from '../mcp/host.js';
import type { PermissionRules } from '../security/rules.js';
import type { SkillLibrary } from '../skills/library.js';
import type { NativeTool } from '../tools/native.js';
import type { SecretMasker } from '../util/secrets.js';
import type { ApproveMode, Approver } from './approval.js';
import type { CodeModeOptions } from './code-mode.js';
import type { AgentEvent, EndReason, Usage } from './events.js';
import type { Guidelines } from './guidelines.js';
import type { DefinitionReviewer } from './held.js';
import type { HooksConfig } from './hooks.js';
import type { ResolvedModel } from './model.js';
import type { Price } from './prices.js';
import type { ToolSearchOptions } from './tool-search.js';
import type { Transcript } from './transcript.js';

/** Bounds on a run: steps, tokens, cost and wall time. */
export interface Limits {
  /** Model calls per run (default 50). */
  maxSteps: number;
  /** Input tokens over the session (every step's prompt counts). */
  maxInputTokens?: number;
  maxOutputTokens?: number;
  /** USD over the session, from the price table; unknown prices count 0 (a notice says so). */
  maxCostUsd?: number;
  /** Wall time of one run. */
  wallTimeMs?: number;
}

export const DEFAULT_LIMITS: Limits = { maxSteps: 50 };
export const DEFAULT_CONTEXT_WINDOW = 200_000;
export const DEFAULT_COMPACT_AT = 0.8;
export const DEFAULT_OUTPUT_CAP_TOKENS = 25_000;
export const DEFAULT_LOOP_THRESHOLD = 3;
export const DEFAULT_TOOL_CONCURRENCY = 4;

/** Who may call what: the approval gate's settings (approval.ts). */
export interface ApprovalOptions {
  /** How calls that need approval are decided when nobody may be asked (default `ask`). */
  mode?: ApproveMode;
  /** Asks the person running tack (a terminal prompt); without one, `ask` denies what would ask. */
  approver?: Approver;
  /** tack.json `permissions`: allow / ask / deny rules over tool names and arguments. */
  permissions?: PermissionRules;
  /** Saves an "always" answer as an allow rule; default: the user's tack.json when `config.paths` is known. */
  persistRule?: (rule: string) => void;
}

/** Pinning of servers' definitions (security/pins.ts), and the review of the ones held back (held.ts). */
export interface PinOptions {
  /** Pin definitions on first sight and hold back changed or flagged ones. Default: on when the host has a store. */
  enabled?: boolean;
  /** Asked once per held definition: accept it now (a terminal prompt)? Headless sessions leave it held. */
  reviewer?: DefinitionReviewer;
}

/** The context window, and what keeps a session inside it. */
export interface ContextOptions {
  /**
   * Its size in tokens (default 200k): compaction, the skills index budget and the deferral of MCP tools are
   * shares of it.
   */
  window?: number;
  /** Compact when a step's prompt passes this share of the window (default 0.8). */
  compactAt?: number;
  /** A tool's output is cut for the model past this many tokens (default 25,000); the whole of it is saved. */
  outputCapTokens?: number;
}

/** Continuing a session (`--resume`): its history and where its totals were. */
export interface ResumeOptions {
  history: ModelMessage[];
  /** The id of the session resumed, said in `session-start`. */
  from?: string;
  /** The totals it had reached (limits keep counting from there). */
  usage?: Usage;
}

/** Set on a sub-agent's session: who started it. */
export interface ParentSession {
  sessionId: string;
  /** The parent's `task` call this session answers. */
  callId: string;
  /** The parent had read untrusted input (from this tool) when it started the sub-agent: it starts tainted. */
  taintedBy?: string;
}

/** Everything a session runs with: the model, the host, skills, knowledge, tools, limits, approvals and context. */
export interface AgentOptions {
  model: ResolvedModel;
  /**
   * Models a step moves to, in order, when the one it runs on fails after its retries with an error of its
   * provider (overload, rate limit, server error, no connection); the run stays on the one that answered.
   */
  fallback?: readonly ResolvedModel[];
  /** Default process.cwd(); guidelines are read from here up to the repository root. */
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;

  // What the session works with.
  /** MCP tools: every tool of the host's catalog, re-read each step (servers come and go). */
  host?: McpHost;
  /**
   * For `trusted` servers, the state directory (transcripts, saved outputs), the scan's limits and judge (its cached
   * verdicts decide definitions the static scan leaves in doubt) and the skill scripts' sandbox.
   */
  config?: Pick<TackConfig, 'servers' | 'paths'> &
    Partial<Pick<TackConfig, 'limits' | 'scan'>> & { sandbox?: TackConfig['sandbox'] };
  skills?: SkillLibrary;
  knowledge?: KnowledgeBase;
  computations?: ComputationRuntimes;
  /** More native tools, offered next to tack's own. */
  tools?: readonly NativeTool[];
  /** Only tools whose model-visible name passes (sub-agents get a subset). */
  toolFilter?: (name: string) => boolean;
  /** Deferred loading of MCP tools past a threshold (search_tools, call_tool). Default: auto. */
  toolSearch?: ToolSearchOptions;
  /** Code mode: run_code, a script calling many tools (default off; code-mode.ts). */
  codeMode?: CodeModeOptions;
  /** Offer the `task` tool (default true; a sub-agent never gets one). */
  subagents?: boolean;
  /** Default: loaded from cwd (user and project AGENTS.md / CLAUDE.md). */
  guidelines?: Guidelines;
  hooks?: HooksConfig;

  // How far it may go, and who allows what.
  limits?: Partial<Limits>;
  prices?: Record<string, Price>;
  approvals?: ApprovalOptions;
  pins?: PinOptions;
  context?: ContextOptions;
  /** Provider retries per step (default 2). */
  maxRetries?: number;
  /** Tool calls of one step run at most this many at a time (default 4). */
  toolConcurrency?: number;
  /** The same call this many times in a row is answered with a warning, once more ends the run (default 3). */
  loopThreshold?: number;

  // The record.
  /** Where events are recorded; `false` keeps none. Default: none (the CLI passes one). */
  transcript?: Transcript | false;
  /** Where cut tool outputs are saved (`<dir>/<session>/outputs/`); default the state directory's sessions/. */
  sessionsDir?: string;
  /** Masks secrets in what the session writes to disk itself (full outputs cut for the model). */
  secrets?: SecretMasker;
  /** Every event of the session, as it happens. */
  onEvent?: (event: AgentEvent) => void;
  /** Said as notices right after the session starts (what was held back while setting it up). */
  notices?: readonly string[];
  sessionId?: string;
  resume?: ResumeOptions;
  parent?: ParentSession;
}

/** How a run ended: the reason, the answer, the steps and the usage. */
export interface RunResult {
  reason: EndReason;
  detail: string;
  answer?: string;
  steps: number;
  usage: Usage;
}
