import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { tool as aiTool, jsonSchema, type ModelMessage, streamText, type ToolSet } from 'ai';
import type { TackConfig } from '../config/load.js';
import { addPermissionRule } from '../config/user-rules.js';
import { errorMessage, TackError } from '../errors.js';
import type { KnowledgeBase } from '../knowledge/knowledge.js';
import { type ComputationRuntimes, computationTool } from '../knowledge/runtimes.js';
import { knowledgeTools } from '../knowledge/tools.js';
import type { Catalog } from '../mcp/catalog.js';
import { hostDefinitions } from '../mcp/definitions.js';
import type { McpHost } from '../mcp/host.js';
import { expectedGuarantees } from '../sandbox/launch.js';
import { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION, searchToolsInput } from '../search/meta-tools.js';
import {
  applySandbox,
  type CapabilityLabel,
  type SandboxFacts,
  trifectaLegs,
} from '../security/capabilities.js';
import { DefinitionGuard, type HeldDefinition } from '../security/pins.js';
import { type PermissionRules, RuleSet } from '../security/rules.js';
import type { SkillLibrary } from '../skills/library.js';
import { RUN_SKILL_SCRIPT, skillTools } from '../skills/tools.js';
import type { NativeTool } from '../tools/native.js';
import { pushAll } from '../util/arrays.js';
import { canonicalJson } from '../util/canonical-json.js';
import type { SecretMasker } from '../util/secrets.js';
import { ApprovalGate, type ApproveMode, type Approver } from './approval.js';
import { elideToolResults, estimateTokens, summarizeOlder } from './compaction.js';
import { type ContextPart, HARNESS_RULES, serverInstructions, systemPrompt } from './context.js';
import { type AgentEvent, type EndReason, type Usage, ZERO_USAGE } from './events.js';
import { type Guidelines, loadGuidelines } from './guidelines.js';
import { type HooksConfig, runHooks } from './hooks.js';
import type { ResolvedModel } from './model.js';
import { addUsage, costOf, DEFAULT_PRICES, type Price, priceOf } from './prices.js';
import { SEARCH_SKILLS, skillSearchTool, skillsLeftOutNote } from './skill-search.js';
import {
  CALL_TOOL,
  DeferredTools,
  deferredToolsPart,
  SEARCH_TOOLS,
  type ToolSearchOptions,
} from './tool-search.js';
import {
  type AgentTool,
  mcpAgentTools,
  nativeAgentTools,
  runTool,
  type ToolServerSettings,
  wrapResult,
} from './toolset.js';
import { newSessionId, type Transcript } from './transcript.js';

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
export const DEFAULT_OUTPUT_CAP_TOKENS = 25_000;
export const DEFAULT_LOOP_THRESHOLD = 3;
export const SUBAGENT_TOOL = 'task';

export interface AgentOptions {
  model: ResolvedModel;
  /** Default process.cwd(); guidelines are read from here up to the repository root. */
  cwd?: string;
  env?: Readonly<Record<string, string | undefined>>;
  /** MCP tools: every tool of the host's catalog, re-read each step (servers come and go). */
  host?: McpHost;
  /** For `trusted` servers, the state directory (transcripts, saved outputs), the scan's limits and the skill scripts' sandbox. */
  config?: Pick<TackConfig, 'servers' | 'paths'> &
    Partial<Pick<TackConfig, 'limits'>> & { sandbox?: TackConfig['sandbox'] };
  skills?: SkillLibrary;
  knowledge?: KnowledgeBase;
  computations?: ComputationRuntimes;
  /** Default: loaded from cwd (user and project AGENTS.md / CLAUDE.md). */
  guidelines?: Guidelines;
  limits?: Partial<Limits>;
  approve?: ApproveMode;
  approver?: Approver;
  hooks?: HooksConfig;
  contextWindow?: number;
  /** Compact when a step's prompt passes this share of the context window (default 0.8). */
  compactAt?: number;
  prices?: Record<string, Price>;
  /** Where events are recorded; `false` keeps none. Default: none (the CLI passes one). */
  transcript?: Transcript | false;
  /** Where cut tool outputs are saved (`<dir>/<session>/outputs/`); default the state directory's sessions/. */
  sessionsDir?: string;
  onEvent?: (event: AgentEvent) => void;
  /** Offer the `task` tool (default true; a sub-agent never gets one). */
  subagents?: boolean;
  toolConcurrency?: number;
  outputCapTokens?: number;
  loopThreshold?: number;
  /** Provider retries per step (default 2). */
  maxRetries?: number;
  /** The history to continue from (`--resume`). */
  history?: ModelMessage[];
  sessionId?: string;
  resumedFrom?: string;
  /** The totals a resumed session had reached (limits keep counting from there). */
  initialUsage?: Usage;
  parent?: { sessionId: string; callId: string };
  /** More native tools, offered next to tack's own. */
  tools?: readonly NativeTool[];
  /** Only tools whose model-visible name passes (sub-agents get a subset). */
  toolFilter?: (name: string) => boolean;
  /** tack.json `permissions`: allow / ask / deny rules over tool names and arguments. */
  permissions?: PermissionRules;
  /** Deferred loading of MCP tools past a threshold (search_tools, call_tool). Default: auto. */
  toolSearch?: ToolSearchOptions;
  /**
   * Pin servers' definitions on first sight and hold back changed or flagged ones (security/pins.ts). Default: on
   * when the host has a store.
   */
  pinning?: boolean;
  /** Asked once per held definition: accept it now (a terminal prompt)? Headless sessions leave it held. */
  reviewer?: DefinitionReviewer;
  /** Saves an "always" answer as an allow rule; default: the user's tack.json when `config.paths` is known. */
  persistRule?: (rule: string) => void;
  /** The parent session had read untrusted input (from this tool) when it started this sub-agent. */
  taintedBy?: string;
  /** Said as notices right after the session starts (what was held back while setting it up). */
  notices?: readonly string[];
  /** Masks secrets in what the session writes to disk itself (full outputs cut for the model). */
  secrets?: SecretMasker;
}

/** Shown a held definition and its diff against the pin; true accepts it (the pin moves to the new version). */
export type DefinitionReviewer = (held: HeldDefinition, diff: string) => Promise<boolean>;

export interface RunResult {
  reason: EndReason;
  detail: string;
  answer?: string;
  steps: number;
  usage: Usage;
}

/**
 * One agent session: the history, the tools, the limits and the record. `run(task)` adds the user's message
 * and loops (model, tool calls, results) until the model answers without a tool call or a limit ends it; a chat
 * calls `run` once per message on the same session. Every step re-reads the tool set, so a server that
 * connects, a list_changed, or (later) tool search can change what the model sees between steps.
 */
export class AgentSession {
  readonly id: string;
  readonly guidelines: Guidelines;
  readonly limits: Limits;
  readonly #options: AgentOptions;
  readonly #gate: ApprovalGate;
  readonly #activeSkills = new Set<string>();
  readonly #native: AgentTool[];
  readonly #settings: Map<string, ToolServerSettings>;
  readonly #guard: DefinitionGuard | undefined;
  /** Definitions held back in the current catalog (changed since approved, or flagged by the scan). */
  #held: Array<HeldDefinition & { modelName?: string }> = [];
  /** Held definitions already announced or put to the reviewer, by server, kind, name and digest. */
  readonly #heldSeen = new Set<string>();
  readonly #reviewed = new Set<string>();
  readonly #deferred: DeferredTools;
  /** The model's price, looked up once (undefined: unknown, counted as 0). */
  readonly #price: Price | undefined;
  #mcp: { catalog: Catalog; tools: AgentTool[] } | undefined;
  readonly #metaTools: AgentTool[];
  #messages: ModelMessage[];
  #system: ContextPart[] = [];
  #total: Usage = ZERO_USAGE;
  #lastPromptTokens = 0;
  #lastCall: { key: string; count: number } | undefined;
  #closed = false;

  private constructor(options: AgentOptions, guidelines: Guidelines, scriptSandbox?: SandboxFacts) {
    this.#options = options;
    // A transcript names its session (resume finds it by that id).
    this.id = options.transcript ? options.transcript.sessionId : (options.sessionId ?? newSessionId());
    this.guidelines = guidelines;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    this.#messages = [...(options.history ?? [])];
    this.#total = options.initialUsage ?? ZERO_USAGE;
    const paths = options.config?.paths;
    this.#gate = new ApprovalGate({
      mode: options.approve ?? 'ask',
      approver: options.approver,
      emit: (e) => this.#emit(e),
      rules: options.permissions ? new RuleSet(options.permissions) : undefined,
      taintedBy: options.taintedBy,
      persistRule:
        options.persistRule ??
        (paths ? (rule) => addPermissionRule(paths.userConfigFile, 'allow', rule) : undefined),
    });
    this.#settings = new Map((options.config?.servers ?? []).map((s) => [s.name, s]));
    const store = options.host?.store;
    this.#guard =
      options.pinning !== false && store
        ? new DefinitionGuard(store.pins, { scanBytes: options.config?.limits?.scanBytes })
        : undefined;
    const native: NativeTool[] = [];
    // tack's own tools carry labels too, so the trifecta flag and the guard see them: a script can do anything.
    // Scripts run in the skill-script sandbox: when it is enforced without network, a script cannot send data out.
    const scriptLabels = applySandbox(
      (['egress', 'destructive'] as const).map((capability) => ({
        capability,
        source: 'default' as const,
        why: 'runs code on this machine',
      })),
      scriptSandbox,
    );
    const labels = new Map<string, CapabilityLabel[]>([[RUN_SKILL_SCRIPT, scriptLabels.labels]]);
    if (options.skills && options.skills.skills.length > 0)
      // The gate asks before run_skill_script (alwaysAsk below), with the arguments; the skill runs once allowed.
      pushAll(
        native,
        skillTools(options.skills, {
          active: this.#activeSkills,
          approve: () => true,
          sandbox: options.config?.sandbox?.skillScripts,
        }),
      );
    if (options.knowledge && options.knowledge.size > 0) {
      const knowledge = knowledgeTools(options.knowledge);
      if (options.computations && options.computations.executors.length > 0)
        knowledge.push(computationTool(options.knowledge, options.computations));
      for (const tool of knowledge)
        labels.set(tool.name, [
          { capability: 'private-data', source: 'default', why: 'reads knowledge bundles' },
        ]);
      pushAll(native, knowledge);
    }
    pushAll(native, options.tools ?? []);
    if (options.subagents !== false && !options.parent) native.push(this.#subagentTool());
    this.#native = nativeAgentTools(native, new Set([RUN_SKILL_SCRIPT]), labels).map((tool) =>
      tool.name === RUN_SKILL_SCRIPT && scriptLabels.ruledOut.length > 0
        ? { ...tool, ruledOut: scriptLabels.ruledOut }
        : tool,
    );
    this.#deferred = new DeferredTools(options.host, options.toolSearch);
    this.#price = priceOf(options.model.id, { ...DEFAULT_PRICES, ...options.prices });
    this.#metaTools = this.#searchTools();
  }

  /** Loads the guidelines (unless given), assembles the stable context, records the start. */
  static async create(options: AgentOptions): Promise<AgentSession> {
    const cwd = options.cwd ?? process.cwd();
    const guidelines =
      options.guidelines ?? (await loadGuidelines({ cwd, ...(options.env ? { env: options.env } : {}) }));
    const scriptSandbox = await expectedGuarantees(options.config?.sandbox?.skillScripts);
    const session = new AgentSession({ ...options, cwd }, guidelines, scriptSandbox);
    await session.#refreshMcp();
    await session.#assemble();
    session.#emit({
      type: 'session-start',
      sessionId: session.id,
      model: options.model.spec,
      cwd,
      guidelinesHash: guidelines.hash,
      guidelinesSources: guidelines.layers.map((l) => l.source),
      ...(options.resumedFrom ? { resumedFrom: options.resumedFrom } : {}),
      ...(options.parent ? { parent: options.parent } : {}),
    });
    for (const warning of guidelines.warnings) session.#emit({ type: 'notice', text: warning });
    for (const text of options.notices ?? []) session.#emit({ type: 'notice', text });
    if (options.host && !options.host.store && options.pinning !== false)
      session.#emit({
        type: 'notice',
        text: 'the tack store is not open: server definitions are neither pinned nor checked for changes this session',
      });
    const started = await runHooks(
      options.hooks,
      'SessionStart',
      { session_id: session.id, source: options.resumedFrom ? 'resume' : 'startup' },
      { cwd },
    );
    session.#hookOutcome(started.warnings);
    session.#flagTrifecta();
    session.#taintFromHistory();
    if (started.additionalContext.length > 0)
      session.#system.push({ name: 'hooks', text: started.additionalContext.join('\n') });
    if (!session.#price)
      session.#emit({
        type: 'notice',
        text: `no price known for ${options.model.id}: cost is counted as 0${session.limits.maxCostUsd !== undefined ? ' and --max-cost cannot stop the run' : ''} (set agent.prices in tack.json)`,
      });
    return session;
  }

  get messages(): readonly ModelMessage[] {
    return this.#messages;
  }

  get usage(): Usage {
    return this.#total;
  }

  /** The parts of the system prompt, in order (what `tack context` prints). */
  get systemParts(): readonly ContextPart[] {
    this.#mcpTools(); // brings the held list up to date with the catalog
    const heldInstructions = new Set(
      this.#held.filter((h) => h.kind === 'instructions').map((h) => h.server),
    );
    const instructions = serverInstructions(this.#options.host, heldInstructions);
    const held = this.#heldPart();
    const deferred = this.deferringTools ? deferredToolsPart(this.#options.host) : undefined;
    return [
      ...this.#system,
      ...(instructions ? [instructions] : []),
      ...(deferred ? [deferred] : []),
      ...(held ? [held] : []),
    ];
  }

  /** The tool whose result first brought untrusted input into this session, once one has. */
  get taintedBy(): string | undefined {
    return this.#gate.taintedBy;
  }

  /** Definitions held back right now (changed since approved, or flagged by the scan). */
  get held(): readonly HeldDefinition[] {
    this.#mcpTools();
    return this.#held;
  }

  /**
   * The tools the next step offers, after the filter: tack's own and every MCP tool, or, past the deferral
   * threshold, tack's own, search_tools, call_tool and the MCP tools always loaded, found or used.
   */
  tools(): AgentTool[] {
    const mcp = this.#mcpTools();
    const { tools, deferred } = this.#deferred.visible(
      mcp,
      this.#options.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
    );
    const all = [...this.#native, ...(deferred ? this.#metaTools : []), ...tools];
    const filter = this.#options.toolFilter;
    return filter
      ? all.filter((t) => filter(t.name) || t.name === SEARCH_TOOLS || t.name === CALL_TOOL)
      : all;
  }

  /**
   * Every MCP tool the session may use (after the filter), loaded or not: those of the catalog the guard last
   * reviewed (#refreshMcp, before every step). A catalog that changed since is offered from the next step on.
   */
  #mcpTools(): AgentTool[] {
    const host = this.#options.host;
    if (!host) return [];
    // Without pinning nothing needs a review: the catalog is mapped as it is.
    if (!this.#guard && this.#mcp?.catalog !== host.catalog) this.#map(host, host.catalog, []);
    const mcp = this.#mcp?.tools ?? [];
    const filter = this.#options.toolFilter;
    return filter ? mcp.filter((t) => filter(t.name)) : mcp;
  }

  /**
   * The host rebuilds its catalog on every change: review, map (and mend schemas) once per catalog, not per call.
   * A held definition accepted meanwhile (`tack pins accept` in another terminal) is seen at the next step.
   */
  async #refreshMcp(force = false): Promise<void> {
    const host = this.#options.host;
    if (!host || (!force && this.#mcp?.catalog === host.catalog)) return;
    const catalog = host.catalog;
    const before = this.#mcp;
    const held = await this.#review(host, catalog);
    // Another refresh may have finished first with a newer catalog: the newest review stands.
    if (this.#mcp !== before && this.#mcp?.catalog === host.catalog) return;
    this.#map(host, catalog, held);
  }

  #map(host: McpHost, catalog: Catalog, held: Array<HeldDefinition & { modelName?: string }>): void {
    this.#held = held;
    const heldTools = new Set(held.filter((h) => h.kind === 'tool').map((h) => h.modelName));
    const entries = catalog.tools.filter((t) => !heldTools.has(t.name));
    this.#mcp = { catalog, tools: mcpAgentTools(host, this.#settings, entries) };
  }

  /** Pins what is new, holds what changed or is flagged, and announces each held definition once. */
  async #review(host: McpHost, catalog: Catalog): Promise<Array<HeldDefinition & { modelName?: string }>> {
    if (!this.#guard) return [];
    const review = await this.#guard.reviewAll(hostDefinitions(host, catalog));
    return review.held.map((h) => {
      const modelName = catalog.tools.find(
        (t) => h.kind === 'tool' && t.server === h.server && t.definition.name === h.name,
      )?.name;
      const key = heldKey(h);
      if (!this.#heldSeen.has(key)) {
        this.#heldSeen.add(key);
        this.#emit({
          type: 'notice',
          text: `held back: ${h.reason} (server ${h.server}); review with \`tack pins diff ${h.server}\`, accept with \`tack pins accept ${h.server}\``,
        });
      }
      return { ...h, ...(modelName ? { modelName } : {}) };
    });
  }

  /** What the model is told when it calls a held tool by name; undefined when `name` is not held. */
  #heldMessage(name: string): string | undefined {
    const held = this.#held.find((h) => h.modelName === name);
    if (!held) return undefined;
    const why =
      held.why === 'changed'
        ? 'its definition changed since the user approved it'
        : 'the security scan flagged its definition';
    return `${name} is unavailable: ${why}. It stays disabled until the user reviews it (\`tack pins diff ${held.server}\`). Do the task without it or tell the user.`;
  }

  /** Tells the model which tools are disabled and why, without repeating their (untrusted) new text. */
  #heldPart(): ContextPart | undefined {
    const tools = this.#held.filter((h) => h.modelName);
    if (tools.length === 0) return undefined;
    const lines = tools.map(
      (h) =>
        `- ${h.modelName}: ${h.why === 'changed' ? 'its definition changed since the user approved it' : 'its definition was flagged by the security scan'}`,
    );
    return {
      name: 'unavailable tools',
      text: `<unavailable_tools>\nThese tools are disabled until the user reviews them (\`tack pins\`). Do not try to call them; if the task needs one, say so to the user.\n${lines.join('\n')}\n</unavailable_tools>`,
    };
  }

  /**
   * Before each step: a held definition accepted meanwhile (`tack pins accept` in another terminal) is offered
   * again, and each one still held is put to the reviewer once; an accepted one is offered from this step on.
   */
  async #reviewHeld(): Promise<void> {
    if (!this.#guard) return;
    await this.#refreshMcp();
    // One store read per server with held definitions per step, not per tools() call.
    if (this.#held.length > 0 && (await this.#guard.released(this.#held))) await this.#refreshMcp(true);
    const reviewer = this.#options.reviewer;
    if (!reviewer) return;
    for (const h of [...this.#held]) {
      const key = heldKey(h);
      if (this.#reviewed.has(key)) continue;
      this.#reviewed.add(key);
      if (!(await reviewer(h, await this.#guard.diff(h)))) continue;
      await this.#guard.accept(h);
      await this.#refreshMcp(true);
      this.#emit({
        type: 'notice',
        text: `accepted: ${h.kind} ${h.name || '(instructions)'} of ${h.server}`,
      });
    }
  }

  /**
   * A resumed history still holds the results it read: a result of an `untrusted-input` tool, or of a tool no
   * longer offered (its labels cannot be known), taints the session again.
   */
  #taintFromHistory(): void {
    if (!this.#options.history?.length) return;
    const known = new Map([...this.#native, ...this.#mcpTools()].map((t) => [t.name, t]));
    // call_tool's result is the named tool's: its name is in the call's arguments.
    const called = new Map<string, string>();
    for (const message of this.#options.history) {
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
        const name = part.toolName === CALL_TOOL ? called.get(part.toolCallId) : part.toolName;
        const tool = name === undefined ? undefined : known.get(name);
        if (tool) this.#gate.noteResult(tool);
        else
          this.#gate.taint(`${name ?? part.toolName} (in the resumed history; its labels are unknown now)`);
        if (this.#gate.taintedBy) return;
      }
    }
  }

  /** A session holding untrusted input, private data and egress at once is flagged before it starts. */
  #flagTrifecta(): void {
    const tools = [...this.#native, ...this.#mcpTools()].map((t) => ({
      name: t.name,
      labels: t.capabilities ?? [],
    }));
    const legs = trifectaLegs(tools);
    if (Object.values(legs).some((holders) => holders.length === 0)) return;
    const show = (names: string[]) => names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
    this.#emit({
      type: 'notice',
      text: `lethal trifecta: this session can read untrusted input (${show(legs['untrusted-input'])}), reach private data (${show(legs['private-data'])}) and send data out (${show(legs.egress)}); once untrusted input is read, every egress call asks`,
    });
  }

  /** Whether MCP tools are deferred right now (for `tack context` and /tools). */
  get deferringTools(): boolean {
    return this.#deferred.defers(this.#mcpTools(), this.#options.contextWindow ?? DEFAULT_CONTEXT_WINDOW);
  }

  #searchTools(): AgentTool[] {
    const search: NativeTool = {
      ...mutable(SEARCH_TOOLS_DEFINITION),
      execute: async (input, context) => {
        const args = searchToolsInput(input);
        if ('error' in args) return { text: args.error, isError: true };
        return { text: await this.#deferred.search(args.queries, args.k, this.#mcpTools(), context?.signal) };
      },
    };
    // call_tool never runs here: #runOne routes it to the tool it names, through the same approval.
    const call: NativeTool = {
      ...mutable(CALL_TOOL_DEFINITION),
      execute: async () => ({ text: `${CALL_TOOL} is routed by the session`, isError: true }),
    };
    return nativeAgentTools([search, call]);
  }

  /** Runs one user message to the end: an answer, a limit, an error or an abort. */
  async run(task: string, options: { signal?: AbortSignal } = {}): Promise<RunResult> {
    if (this.#closed) throw new TackError('SESSION', 'the session is closed');
    const started = Date.now();
    const wall = this.limits.wallTimeMs;
    const timeout = wall !== undefined ? AbortSignal.timeout(wall) : undefined;
    const signals = [options.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;
    this.#lastCall = undefined;
    this.#push({ role: 'user', content: task });
    let steps = 0;
    let stopHookActive = false;
    const end = (reason: EndReason, detail: string, answer?: string): RunResult => {
      const result: RunResult = {
        reason,
        detail,
        steps,
        usage: this.#total,
        ...(answer !== undefined ? { answer } : {}),
      };
      this.#emit({
        type: 'session-end',
        reason,
        detail,
        total: this.#total,
        steps,
        ...(answer !== undefined ? { answer } : {}),
      });
      return result;
    };
    const aborted = () =>
      timeout?.aborted && !options.signal?.aborted
        ? end(
            'wall-time',
            `stopped after ${Math.round((Date.now() - started) / 1000)} s (wall time limit ${wall} ms)`,
          )
        : end('aborted', 'interrupted');

    for (;;) {
      if (signal.aborted) return aborted();
      const limit = this.#limitReached(steps);
      if (limit) return end(limit.reason, limit.detail);
      try {
        await this.#maybeCompact(signal);
      } catch (error) {
        if (signal.aborted) return aborted();
        this.#emit({ type: 'error', message: `compaction failed: ${errorMessage(error)}` });
      }
      await this.#reviewHeld();
      steps++;
      const tools = this.tools();
      this.#emit({ type: 'step-start', step: steps, tools: tools.length });
      let step: StepOutcome;
      try {
        step = await this.#callModel(tools, signal, steps);
      } catch (error) {
        if (signal.aborted) return aborted();
        const message = errorMessage(error);
        this.#emit({ type: 'error', message, code: 'MODEL_FAILED' });
        return end('error', `the model call failed: ${message}`);
      }
      if (step.toolCalls.length === 0) {
        const stop = await runHooks(
          this.#options.hooks,
          'Stop',
          { session_id: this.id, stop_hook_active: stopHookActive },
          { cwd: this.#cwd, signal },
        );
        this.#hookOutcome(stop.warnings);
        if (stop.decision === 'deny' && !stopHookActive) {
          // A Stop hook may send the model back to work once (Claude Code's semantics), with its reason.
          stopHookActive = true;
          this.#push({
            role: 'user',
            content: `A hook asked you to continue: ${stop.reason ?? 'the task is not done'}`,
          });
          continue;
        }
        return end('completed', `answered after ${steps} step${steps === 1 ? '' : 's'}`, step.text);
      }
      const outcome = await this.#runCalls(step.toolCalls, steps, signal);
      if (signal.aborted) return aborted();
      if (outcome === 'loop')
        return end(
          'loop',
          'the model kept calling the same tool with the same arguments after being told to stop',
        );
    }
  }

  /** Forces compaction now (`/compact`); returns what it did. */
  async compact(signal?: AbortSignal): Promise<Extract<AgentEvent, { type: 'compaction' }> | undefined> {
    return this.#compact(true, signal ?? new AbortController().signal);
  }

  close(): void {
    this.#closed = true;
  }

  get #cwd(): string {
    return this.#options.cwd ?? process.cwd();
  }

  async #assemble(): Promise<void> {
    const parts: ContextPart[] = [{ name: 'harness rules', text: HARNESS_RULES }];
    // One part: the text carries its own per-layer markers (guidelines.ts).
    if (this.guidelines.text)
      parts.push({
        name: 'guidelines',
        source: this.guidelines.layers.map((l) => l.source).join(', '),
        text: this.guidelines.text,
      });
    const { skills, knowledge } = this.#options;
    if (skills && skills.skills.length > 0 && this.tools().some((t) => t.name === 'activate_skill')) {
      const { countTokens } = await import('../tokens/count.js');
      const index = await skills.renderIndex({
        countTokens,
        contextWindow: this.#options.contextWindow ?? DEFAULT_CONTEXT_WINDOW,
      });
      // Skills past the budget stay reachable: a search over all of them, and a line saying so.
      const left = index.dropped.length;
      if (left > 0 && !this.#native.some((t) => t.name === SEARCH_SKILLS))
        pushAll(this.#native, nativeAgentTools([skillSearchTool(skills, left)]));
      parts.push({
        name: 'skills index',
        text: left > 0 ? `${index.text}\n${skillsLeftOutNote(left, skills.skills.length)}` : index.text,
      });
    }
    if (knowledge && knowledge.size > 0)
      parts.push({
        name: 'knowledge',
        text: `<knowledge_bundles>\n${knowledge.summary()}\n</knowledge_bundles>\nSearch them with search_knowledge; read a concept with read_concept.`,
      });
    this.#system = parts;
  }

  #emit(event: AgentEvent): void {
    if (this.#options.transcript) this.#options.transcript.append(event);
    this.#options.onEvent?.(event);
  }

  #push(message: ModelMessage): void {
    this.#messages.push(message);
    this.#emit({ type: 'message', message });
  }

  #hookOutcome(warnings: readonly string[]): void {
    for (const warning of warnings) this.#emit({ type: 'notice', text: `hook: ${warning}` });
  }

  #limitReached(steps: number): { reason: EndReason; detail: string } | undefined {
    const l = this.limits;
    const t = this.#total;
    if (steps >= l.maxSteps)
      return { reason: 'max-steps', detail: `stopped after ${steps} steps (--max-steps ${l.maxSteps})` };
    if (l.maxInputTokens !== undefined && t.inputTokens >= l.maxInputTokens)
      return {
        reason: 'max-input-tokens',
        detail: `${t.inputTokens} input tokens used (limit ${l.maxInputTokens})`,
      };
    if (l.maxOutputTokens !== undefined && t.outputTokens >= l.maxOutputTokens)
      return {
        reason: 'max-output-tokens',
        detail: `${t.outputTokens} output tokens used (limit ${l.maxOutputTokens})`,
      };
    if (l.maxCostUsd !== undefined && t.costUsd >= l.maxCostUsd)
      return { reason: 'max-cost', detail: `$${t.costUsd.toFixed(4)} spent (limit $${l.maxCostUsd})` };
    return undefined;
  }

  async #callModel(tools: AgentTool[], signal: AbortSignal, stepNumber: number): Promise<StepOutcome> {
    const toolSet: ToolSet = {};
    for (const t of tools) {
      toolSet[t.name] = aiTool({
        description: t.description,
        inputSchema: jsonSchema(t.inputSchema as never),
      });
    }
    let failure: unknown;
    const result = streamText({
      model: this.#options.model.model,
      system: systemPrompt(this.systemParts),
      messages: this.#messages,
      tools: toolSet,
      abortSignal: signal,
      maxRetries: this.#options.maxRetries ?? 2,
      // Errors arrive as stream parts below; the default handler would also print them.
      onError: () => {},
    });
    for await (const part of result.fullStream) {
      if (part.type === 'text-delta') this.#emit({ type: 'text-delta', text: part.text });
      else if (part.type === 'error') failure = part.error;
    }
    if (failure !== undefined) throw failure;
    const response = await result.response;
    for (const message of response.messages) this.#push(message);
    const usage = await result.usage;
    const stepUsage = {
      inputTokens: usage.inputTokens ?? 0,
      outputTokens: usage.outputTokens ?? 0,
      cachedInputTokens: usage.inputTokenDetails?.cacheReadTokens ?? 0,
    };
    const withCost: Usage = { ...stepUsage, costUsd: costOf(stepUsage, this.#price) };
    this.#total = addUsage(this.#total, withCost);
    this.#lastPromptTokens = stepUsage.inputTokens;
    this.#emit({ type: 'usage', step: stepNumber, stepUsage: withCost, total: this.#total });
    const toolCalls = (await result.toolCalls).map((c) => ({
      toolCallId: c.toolCallId,
      toolName: c.toolName,
      input: c.input,
      invalid: (c as { invalid?: boolean }).invalid === true,
      error: (c as { error?: unknown }).error,
    }));
    return { text: await result.text, toolCalls };
  }

  async #runCalls(calls: ToolCallRequest[], step: number, signal: AbortSignal): Promise<'loop' | undefined> {
    const tools = new Map([...this.#mcpTools(), ...this.tools()].map((t) => [t.name, t]));
    const threshold = this.#options.loopThreshold ?? DEFAULT_LOOP_THRESHOLD;
    // Repetition is judged in the order the model asked, before anything runs.
    const verdicts = calls.map((call) => {
      const key = `${call.toolName} ${canonicalJson(call.input ?? {})}`;
      this.#lastCall =
        this.#lastCall?.key === key ? { key, count: this.#lastCall.count + 1 } : { key, count: 1 };
      return this.#lastCall.count > threshold ? 'stop' : this.#lastCall.count === threshold ? 'warn' : 'run';
    });
    if (verdicts.includes('stop')) {
      // The history must stay valid: every call the model made gets a result before the run ends.
      this.#push({
        role: 'tool',
        content: calls.map((c) =>
          toolResultPart(c, 'Not run: the run was stopped for repeating this call.', true),
        ),
      });
      return 'loop';
    }
    const results = new Array<{ text: string; isError: boolean }>(calls.length);
    const concurrency = Math.max(1, this.#options.toolConcurrency ?? 4);
    let next = 0;
    const worker = async () => {
      while (next < calls.length) {
        const i = next++;
        const call = calls[i]!;
        this.#emit({
          type: 'tool-call',
          step,
          callId: call.toolCallId,
          name: call.toolName,
          arguments: call.input,
          ...(tools.get(call.toolName)?.server ? { server: tools.get(call.toolName)!.server! } : {}),
        });
        const started = Date.now();
        const result =
          verdicts[i] === 'warn'
            ? {
                text: `You have called ${call.toolName} with these same arguments ${threshold} times in a row; the result will not change. Do something different, or give your answer. Calling it again ends the run.`,
                isError: true,
              }
            : await this.#runOne(call, tools.get(call.toolName), signal);
        results[i] = result;
        const { text, savedTo } = this.#capOutput(call.toolCallId, result.text);
        results[i] = { text, isError: result.isError };
        this.#emit({
          type: 'tool-result',
          callId: call.toolCallId,
          name: call.toolName,
          isError: result.isError,
          text,
          durationMs: Date.now() - started,
          ...(savedTo ? { savedTo } : {}),
        });
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, worker));
    this.#push({
      role: 'tool',
      content: calls.map((call, i) => {
        const tool = tools.get(call.toolName);
        const { text, isError } = results[i]!;
        return toolResultPart(call, tool ? wrapResult(tool, text, isError) : text, isError);
      }),
    });
    return undefined;
  }

  async #runOne(
    call: ToolCallRequest,
    tool: AgentTool | undefined,
    signal: AbortSignal,
  ): Promise<{ text: string; isError: boolean }> {
    if (tool?.name === CALL_TOOL) return this.#callTool(call, signal);
    if (!tool) {
      const held = this.#heldMessage(call.toolName);
      if (held) return { text: held, isError: true };
      const names = this.tools().map((t) => t.name);
      return {
        text: `There is no tool named "${call.toolName}". Available: ${names.join(', ')}.`,
        isError: true,
      };
    }
    if (call.invalid || typeof call.input !== 'object' || call.input === null || Array.isArray(call.input))
      return {
        text: `The arguments for ${call.toolName} were not a JSON object${call.error ? ` (${errorMessage(call.error)})` : ''}. Send an object that matches the tool's input schema.`,
        isError: true,
      };
    const input = call.input as Record<string, unknown>;
    const payload = {
      session_id: this.id,
      tool_name: tool.name,
      tool_input: input,
      tool_use_id: call.toolCallId,
    };
    const pre = await runHooks(this.#options.hooks, 'PreToolUse', payload, { cwd: this.#cwd, signal });
    this.#hookOutcome(pre.warnings);
    let allowed: boolean;
    let reason: string;
    if (pre.decision === 'deny') {
      allowed = false;
      reason = pre.reason ?? 'a PreToolUse hook said deny';
      this.#emit({
        type: 'approval',
        callId: call.toolCallId,
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
      ({ allowed, reason } = await this.#gate.decide(gated, call.toolCallId, input));
    }
    if (!allowed)
      return {
        text: `The call to ${tool.name} was not approved (${reason}). Do not retry it unchanged; find another way or ask the user.`,
        isError: true,
      };
    if (!tool.native) this.#deferred.used(tool);
    const result = await runTool(tool, input, signal);
    this.#gate.noteResult(tool);
    const post = await runHooks(
      this.#options.hooks,
      'PostToolUse',
      { ...payload, tool_response: { text: result.text, isError: result.isError } },
      { cwd: this.#cwd, signal },
    );
    this.#hookOutcome(post.warnings);
    if (post.decision === 'deny')
      return { text: `A hook withheld this result: ${post.reason ?? 'no reason given'}`, isError: true };
    return post.additionalContext.length > 0
      ? { ...result, text: `${result.text}\n\n[hook] ${post.additionalContext.join('\n')}` }
      : result;
  }

  /** call_tool: the named MCP tool, run now, through the same hooks and approval as a direct call. */
  async #callTool(call: ToolCallRequest, signal: AbortSignal): Promise<{ text: string; isError: boolean }> {
    const input = (call.input ?? {}) as Record<string, unknown>;
    const name = typeof input.name === 'string' ? input.name : '';
    const args = input.arguments ?? {};
    const target = this.#mcpTools().find((t) => t.name === name);
    const held = target ? undefined : this.#heldMessage(name);
    if (held) return { text: held, isError: true };
    if (!target)
      return {
        text: `${CALL_TOOL}: no tool named "${name}"; find one with ${SEARCH_TOOLS} first and pass its exact name.`,
        isError: true,
      };
    if (typeof args !== 'object' || args === null || Array.isArray(args))
      return { text: `${CALL_TOOL}: "arguments" must be an object`, isError: true };
    return this.#runOne({ ...call, toolName: name, input: args, invalid: false }, target, signal);
  }

  /** Output over the cap is cut for the model; the whole of it is saved in the session folder and named. */
  #capOutput(callId: string, text: string): { text: string; savedTo?: string } {
    const capChars = (this.#options.outputCapTokens ?? DEFAULT_OUTPUT_CAP_TOKENS) * 4;
    if (text.length <= capChars) return { text };
    const dir = join(this.#sessionsDir(), this.id, 'outputs');
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
      text: `${text.slice(0, capChars)}\n[output cut at ${capChars} of ${text.length} characters (~${Math.round(text.length / 4)} tokens); the whole output is saved in ${file}]`,
      savedTo: file,
    };
  }

  #sessionsDir(): string {
    if (this.#options.sessionsDir) return this.#options.sessionsDir;
    const state = this.#options.config?.paths.stateDir;
    return state ? join(state, 'sessions') : join(this.#cwd, '.tack-sessions');
  }

  async #maybeCompact(signal: AbortSignal): Promise<void> {
    const window = this.#options.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    const at = (this.#options.compactAt ?? 0.8) * window;
    const size = Math.max(this.#lastPromptTokens, estimateTokens(this.#messages));
    if (size >= at) await this.#compact(false, signal);
  }

  async #compact(
    force: boolean,
    signal: AbortSignal,
  ): Promise<Extract<AgentEvent, { type: 'compaction' }> | undefined> {
    const window = this.#options.contextWindow ?? DEFAULT_CONTEXT_WINDOW;
    const target = (this.#options.compactAt ?? 0.8) * window * 0.6;
    const before = estimateTokens(this.#messages);
    const elided = elideToolResults(this.#messages);
    let messages = elided.messages;
    let summarized = 0;
    if (force || estimateTokens(messages) > target) {
      const reattach = await this.#activeSkillsText();
      const summary = await summarizeOlder(messages, {
        model: this.#options.model.model,
        keep: 4,
        ...(reattach ? { reattach } : {}),
        abortSignal: signal,
      });
      messages = summary.messages;
      summarized = summary.summarized;
    }
    if (elided.elided === 0 && summarized === 0) return undefined;
    this.#messages = messages;
    this.#lastPromptTokens = 0;
    const event = {
      type: 'compaction' as const,
      tokensBefore: before,
      tokensAfter: estimateTokens(messages),
      elidedToolResults: elided.elided,
      summarizedMessages: summarized,
      messages,
    };
    this.#emit(event);
    return event;
  }

  /** The bodies of the skills this session activated, for after a summary removed the turns that loaded them. */
  async #activeSkillsText(): Promise<string | undefined> {
    const skills = this.#options.skills;
    if (!skills || this.#activeSkills.size === 0) return undefined;
    const bodies: string[] = [];
    for (const name of this.#activeSkills) {
      const { text } = await skills.activate(name).catch(() => ({ text: '' }));
      if (text) bodies.push(text);
    }
    return bodies.length > 0
      ? `Skills active in this session, attached again after compaction:\n${bodies.join('\n\n')}`
      : undefined;
  }

  /** The `task` tool: a child session with a fresh context, a subset of the tools and its own limits. */
  #subagentTool(): NativeTool {
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
      execute: async (input, context) => {
        const prompt = typeof input.prompt === 'string' ? input.prompt : '';
        if (!prompt) return { text: 'task: "prompt" must be a non-empty string', isError: true };
        const patterns = Array.isArray(input.tools)
          ? input.tools.filter((t): t is string => typeof t === 'string')
          : undefined;
        const allowed = patterns?.map(
          (p) => new RegExp(`^${p.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`),
        );
        const parentFilter = this.#options.toolFilter;
        const maxSteps =
          typeof input.max_steps === 'number' ? Math.min(50, Math.max(1, Math.trunc(input.max_steps))) : 20;
        const {
          resumedFrom: _resumed,
          initialUsage: _usage,
          taintedBy: _taint,
          ...inherited
        } = this.#options;
        // The guard follows the data: a sub-agent of a tainted session starts tainted, and a sub-agent that read
        // untrusted input hands it back in its answer, tainting this session.
        const taintedBy = this.#gate.taintedBy;
        const child = await AgentSession.create({
          ...inherited,
          guidelines: this.guidelines,
          history: [],
          sessionId: newSessionId(),
          parent: { sessionId: this.id, callId: 'task' },
          ...(taintedBy ? { taintedBy } : {}),
          limits: { ...this.limits, maxSteps },
          transcript: false,
          subagents: false,
          toolFilter: (name) =>
            name !== SUBAGENT_TOOL &&
            (parentFilter ? parentFilter(name) : true) &&
            (allowed ? allowed.some((r) => r.test(name)) : true),
          onEvent: (event) => {
            if (event.type === 'tool-call' || event.type === 'approval' || event.type === 'notice')
              this.#emit({ type: 'notice', text: `[task] ${describeChildEvent(event)}` });
          },
        });
        const result = await child.run(prompt, context?.signal ? { signal: context.signal } : {});
        this.#total = addUsage(this.#total, result.usage);
        if (child.taintedBy) this.#gate.taint(`${SUBAGENT_TOOL} (${child.taintedBy})`);
        if (result.reason === 'completed') return { text: result.answer ?? '' };
        return {
          text: `The sub-agent stopped without an answer: ${result.reason} (${result.detail}).`,
          isError: true,
        };
      },
    };
  }
}

/** One held version of one definition: announced and put to the reviewer once each. */
function heldKey(h: HeldDefinition): string {
  return `${h.identity}\0${h.kind}\0${h.name}\0${h.sha256}`;
}

/** The search layer's frozen definitions in NativeTool's shape. */
function mutable(definition: {
  name: string;
  description: string;
  inputSchema: {
    readonly properties: Readonly<Record<string, unknown>>;
    readonly required: readonly string[];
  };
}): Pick<NativeTool, 'name' | 'description' | 'inputSchema'> {
  return {
    name: definition.name,
    description: definition.description,
    inputSchema: {
      type: 'object',
      properties: { ...definition.inputSchema.properties },
      required: [...definition.inputSchema.required],
      additionalProperties: false,
    },
  };
}

/** A tool call the model asked for; `invalid` when its arguments did not parse or named no tool. */
interface ToolCallRequest {
  toolCallId: string;
  toolName: string;
  input: unknown;
  invalid: boolean;
  error: unknown;
}

interface StepOutcome {
  text: string;
  toolCalls: ToolCallRequest[];
}

function describeChildEvent(event: AgentEvent): string {
  if (event.type === 'tool-call') return `calls ${event.name} ${JSON.stringify(event.arguments)}`;
  if (event.type === 'approval') return `${event.decision} ${event.name}: ${event.reason}`;
  if (event.type === 'notice') return event.text;
  return event.type;
}

function toolResultPart(
  call: { toolCallId: string; toolName: string },
  text: string,
  isError: boolean,
): Extract<Extract<ModelMessage, { role: 'tool' }>['content'][number], { type: 'tool-result' }> {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    toolName: call.toolName,
    output: { type: isError ? 'error-text' : 'text', value: text },
  };
}
