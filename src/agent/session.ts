import { hostname } from 'node:os';
import { join } from 'node:path';
import type { ModelMessage } from 'ai';
import { serverApis } from '../codemode/declarations.js';
import { addPermissionRule } from '../config/user-rules.js';
import { errorMessage, TackError } from '../errors.js';
import { expectedGuarantees } from '../sandbox/launch.js';
import type { SandboxFacts } from '../security/capabilities.js';
import { DefinitionGuard, guardOptions, type HeldDefinition } from '../security/pins.js';
import { ACTIVATE_SKILL } from '../skills/tools.js';
import { errorTypeOf, inSpan } from '../telemetry/spans.js';
import type { NativeTool } from '../tools/native.js';
import { pushAll } from '../util/arrays.js';
import { apiTools, codeModePart, codeModeTools } from './code-mode.js';
import { type CompactionEvent, Compactor } from './compaction.js';
import { type ContextPart, serverInstructions, stableParts, systemPrompt } from './context.js';
import { type AgentEvent, type EndReason, type Usage, ZERO_USAGE } from './events.js';
import { type Guidelines, loadGuidelines } from './guidelines.js';
import { HeldReview } from './held.js';
import { History } from './history.js';
import { hookNotices, runHooks } from './hooks.js';
import { modelFailureHint } from './model.js';
import {
  type AgentOptions,
  DEFAULT_COMPACT_AT,
  DEFAULT_CONTEXT_WINDOW,
  DEFAULT_LIMITS,
  DEFAULT_LOOP_THRESHOLD,
  DEFAULT_OUTPUT_CAP_TOKENS,
  DEFAULT_TOOL_CONCURRENCY,
  type Limits,
  type RunResult,
} from './options.js';
import { ToolPipeline } from './pipeline.js';
import { DEFAULT_PRICES, type Price, priceOf } from './prices.js';
import { prefixHash } from './prompt-cache.js';
import { ownTools, SessionTools } from './session-tools.js';
import { skillSearchTool } from './skill-search.js';
import { subagentTool } from './subagents.js';
import { deferredToolsPart } from './tool-search.js';
import { type AgentTool, nativeAgentTools } from './toolset.js';
import { newSessionId } from './transcript.js';
import { limitReached, TurnRunner } from './turn.js';

// The session's options, where callers of the session find them.
export type { AgentOptions, Limits, RunResult } from './options.js';

/**
 * One agent session: the history, the tools, the limits and the record. `run(task)` adds the user's message
 * and loops (model, tool calls, results) until the model answers without a tool call or a limit ends it; a chat
 * calls `run` once per message on the same session. Every step re-reads the tool set, so a server that
 * connects, a list_changed, or tool search can change what the model sees between steps.
 *
 * The session is the orchestrator: it owns the history and totals (history.ts) and wires the parts, each in
 * its own file: the step (turn.ts), the path of every tool call (pipeline.ts), the tool set (session-tools.ts),
 * the review of held definitions (held.ts), sub-agents (subagents.ts) and compaction (compaction.ts). Everything
 * it does comes out as events (events.ts).
 */
export class AgentSession {
  readonly id: string;
  readonly guidelines: Guidelines;
  readonly limits: Limits;
  readonly #options: AgentOptions;
  readonly #cwd: string;
  readonly #history: History;
  readonly #held: HeldReview;
  readonly #tools: SessionTools;
  readonly #pipeline: ToolPipeline;
  readonly #turn: TurnRunner;
  readonly #compactor: Compactor;
  /** The model's price, looked up once (undefined: unknown, counted as 0). */
  readonly #price: Price | undefined;
  /** The stable parts of the system prompt (context.ts stableParts), then SessionStart hooks' context. */
  #system: ContextPart[] = [];
  /** Skills activated this session (by the model's activate_skill or the user's /skill): loaded once each. */
  readonly #activeSkills = new Set<string>();
  #closed = false;
  /** A `session-start`, or a run, not yet followed by its `session-end`: what close() ends. */
  #open = false;
  /** Whether a run was ever started (close() says which kind of unfinished session it ended). */
  #ran = false;
  /** Steps of the run in progress, for an end written by close(). */
  #steps = 0;

  private constructor(
    options: AgentOptions,
    cwd: string,
    guidelines: Guidelines,
    scriptSandbox?: SandboxFacts,
  ) {
    this.#options = options;
    this.#cwd = cwd;
    // A transcript names its session (resume finds it by that id).
    this.id = options.transcript ? options.transcript.sessionId : (options.sessionId ?? newSessionId());
    this.guidelines = guidelines;
    this.limits = { ...DEFAULT_LIMITS, ...options.limits };
    const emit = (event: AgentEvent) => this.#emit(event);
    this.#history = new History(options.resume?.history ?? [], options.resume?.usage ?? ZERO_USAGE, emit);
    const store = options.host?.store;
    this.#held = new HeldReview({
      guard:
        options.pins?.enabled !== false && store
          ? new DefinitionGuard(store.pins, guardOptions(options.config, store))
          : undefined,
      reviewer: options.pins?.reviewer,
      emit,
    });
    const activeSkills = this.#activeSkills;
    const window = options.context?.window ?? DEFAULT_CONTEXT_WINDOW;
    this.#tools = new SessionTools({
      host: options.host,
      settings: new Map((options.config?.servers ?? []).map((s) => [s.name, s])),
      native: nativeAgentTools(this.#nativeTools(activeSkills), { skillScripts: scriptSandbox }),
      toolFilter: options.toolFilter,
      toolSearch: options.toolSearch,
      contextWindow: window,
      held: this.#held,
      codeMode: options.codeMode,
    });
    const paths = options.config?.paths;
    const state = paths?.stateDir;
    const sessionsDir =
      options.sessionsDir ?? (state ? join(state, 'sessions') : join(cwd, '.tack-sessions'));
    this.#pipeline = new ToolPipeline({
      sessionId: this.id,
      cwd,
      tools: this.#tools,
      held: this.#held,
      hooks: options.hooks,
      approvals: {
        ...options.approvals,
        persistRule:
          options.approvals?.persistRule ??
          (paths ? (rule) => addPermissionRule(paths.userConfigFile, 'allow', rule) : undefined),
      },
      taintedBy: options.parent?.taintedBy,
      outputCapTokens: options.context?.outputCapTokens ?? DEFAULT_OUTPUT_CAP_TOKENS,
      outputsDir: join(sessionsDir, this.id, 'outputs'),
      secrets: options.secrets,
      emit,
    });
    const prices = { ...DEFAULT_PRICES, ...options.prices };
    this.#price = priceOf(options.model.id, prices);
    this.#turn = new TurnRunner({
      model: options.model,
      maxRetries: options.maxRetries ?? 2,
      price: this.#price,
      fallback: (options.fallback ?? []).map((model) => ({ model, price: priceOf(model.id, prices) })),
      history: this.#history,
      pipeline: this.#pipeline,
      find: (name) => this.#tools.find(name),
      loopThreshold: options.loopThreshold ?? DEFAULT_LOOP_THRESHOLD,
      concurrency: options.toolConcurrency ?? DEFAULT_TOOL_CONCURRENCY,
      emit: (event) => {
        emit(event);
        if (event.type === 'model-fallback' && !this.#turn.current.price)
          emit({
            type: 'notice',
            text: `no price known for ${event.to}: its steps' cost is counted as 0 (set agent.prices in tack.json)`,
          });
      },
    });
    this.#compactor = new Compactor({
      model: () => this.#turn.current.model.model,
      history: this.#history,
      window,
      compactAt: options.context?.compactAt ?? DEFAULT_COMPACT_AT,
      skills: options.skills,
      activeSkills,
      emit,
    });
  }

  /** Loads the guidelines (unless given), assembles the stable context, records the start. */
  static async create(options: AgentOptions): Promise<AgentSession> {
    const cwd = options.cwd ?? process.cwd();
    const guidelines =
      options.guidelines ?? (await loadGuidelines({ cwd, ...(options.env ? { env: options.env } : {}) }));
    // Each script also sees its skill's own folder (a user skill lives in the home folder): the labels say so.
    const scriptSandbox = await expectedGuarantees(
      options.config?.sandbox?.skillScripts,
      (options.skills?.skills ?? []).map((skill) => ({
        path: skill.dir,
        rule: `the skill's own folder (${skill.name})`,
      })),
    );
    const session = new AgentSession({ ...options, cwd }, cwd, guidelines, scriptSandbox);
    await session.#assemble();
    const parent = options.parent;
    session.#emit({
      type: 'session-start',
      sessionId: session.id,
      model: options.model.spec,
      ...(options.fallback?.length ? { fallback: options.fallback.map((m) => m.spec) } : {}),
      cwd,
      guidelinesHash: guidelines.hash,
      guidelinesSources: guidelines.layers.map((l) => l.source),
      ...(options.resume?.from ? { resumedFrom: options.resume.from } : {}),
      ...(parent ? { parent: { sessionId: parent.sessionId, callId: parent.callId } } : {}),
      pid: process.pid,
      hostname: hostname(),
    });
    for (const warning of guidelines.warnings) session.#emit({ type: 'notice', text: warning });
    for (const text of options.notices ?? []) session.#emit({ type: 'notice', text });
    if (options.host && !options.host.store && options.pins?.enabled !== false)
      session.#emit({
        type: 'notice',
        text: 'the tack store is not open: server definitions are neither pinned nor checked for changes this session',
      });
    const started = await runHooks(
      options.hooks,
      'SessionStart',
      { session_id: session.id, source: options.resume?.from ? 'resume' : 'startup' },
      { cwd },
    );
    for (const notice of hookNotices(started.warnings)) session.#emit(notice);
    // The first review of the catalog: held definitions are announced here.
    await session.refresh();
    const trifecta = session.#tools.trifectaNotice();
    if (trifecta) session.#emit({ type: 'notice', text: trifecta });
    const history = options.resume?.history ?? [];
    if (history.length > 0)
      session.#pipeline.taintFromHistory(history, new Map(session.#tools.all().map((t) => [t.name, t])));
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
    return this.#history.messages;
  }

  get usage(): Usage {
    return this.#history.usage;
  }

  /**
   * This session's steps' usage by the `provider:id` that ran them, since it started or was resumed (a fallback
   * adds a second model); sub-agents' usage is in `usage` only.
   */
  get usageByModel(): ReadonlyMap<string, Usage> {
    return this.#history.usageByModel;
  }

  /**
   * The parts of the system prompt, in order (what `tack context` prints), as of the last refresh: held
   * instructions are left out and held tools named in `<unavailable_tools>`.
   */
  get systemParts(): readonly ContextPart[] {
    const instructions = serverInstructions(this.#options.host, this.#held.heldInstructions());
    const held = this.#held.part();
    const deferred = this.deferringTools ? deferredToolsPart(this.#options.host) : undefined;
    const code = this.#tools.codeMode
      ? codeModePart(
          this.#options.codeMode,
          serverApis(apiTools(this.#tools.mcpAsOfRefresh())),
          this.deferringTools,
        )
      : undefined;
    return [
      ...this.#system,
      ...(instructions ? [instructions] : []),
      ...(deferred ? [deferred] : []),
      ...(code ? [code] : []),
      ...(held ? [held] : []),
    ];
  }

  /** The tool whose result first brought untrusted input into this session, once one has. */
  get taintedBy(): string | undefined {
    return this.#pipeline.taintedBy;
  }

  /** Definitions held back as of the last refresh (changed since approved, or flagged by the scan). */
  get held(): readonly HeldDefinition[] {
    return this.#held.held;
  }

  /** Whether MCP tools are deferred, as of the last refresh (for `tack context` and /tools). */
  get deferringTools(): boolean {
    return this.#tools.deferring;
  }

  /**
   * Brings the MCP tools, the held list and what the getters show up to date with the host's catalog: a new
   * catalog is reviewed by the pins guard (held definitions are announced) and mapped. Each step does it too;
   * `tools()` shows the catalog as of the last refresh when definitions are pinned.
   */
  async refresh(): Promise<void> {
    await this.#tools.refresh();
  }

  /**
   * The tools the next step offers, after the filter: tack's own and every MCP tool, or, past the deferral
   * threshold, tack's own, search_tools, call_tool and the MCP tools always loaded, found or used.
   */
  tools(): AgentTool[] {
    return this.#tools.visible();
  }

  /**
   * Runs one user message to the end: an answer, a limit, an error or an abort. Traced (when a tracer provider is
   * registered) as an `invoke_agent` span (GenAI semantic conventions) with a `tack.step` span per step; the
   * tokens and cost are this run's, sub-agents' included.
   */
  async run(task: string, options: { signal?: AbortSignal } = {}): Promise<RunResult> {
    if (this.#closed) throw new TackError('SESSION', 'the session is closed');
    const before = this.#history.usage;
    const { model, parent } = this.#options;
    const agent = parent ? 'tack-subagent' : 'tack';
    return inSpan(
      `invoke_agent ${agent}`,
      {
        attributes: {
          'gen_ai.operation.name': 'invoke_agent',
          'gen_ai.agent.name': agent,
          'gen_ai.conversation.id': this.id,
          'gen_ai.provider.name': model.provider,
          'gen_ai.request.model': model.id,
        },
      },
      async (span) => {
        const result = await this.#run(task, options);
        const { usage } = result;
        span.set({
          'tack.end.reason': result.reason,
          'tack.steps': result.steps,
          'gen_ai.usage.input_tokens': usage.inputTokens - before.inputTokens,
          'gen_ai.usage.output_tokens': usage.outputTokens - before.outputTokens,
          'gen_ai.usage.cache_read.input_tokens': usage.cachedInputTokens - before.cachedInputTokens,
          'gen_ai.usage.cache_creation.input_tokens':
            (usage.cacheWriteTokens ?? 0) - (before.cacheWriteTokens ?? 0),
          'tack.cost.usd': usage.costUsd - before.costUsd,
        });
        if (result.reason === 'error') span.fail('MODEL_FAILED');
        return result;
      },
    );
  }

  async #run(task: string, options: { signal?: AbortSignal }): Promise<RunResult> {
    const started = Date.now();
    const wall = this.limits.wallTimeMs;
    const timeout = wall !== undefined ? AbortSignal.timeout(wall) : undefined;
    const signals = [options.signal, timeout].filter((s): s is AbortSignal => s !== undefined);
    const signal = signals.length > 0 ? AbortSignal.any(signals) : new AbortController().signal;
    this.#turn.startRun();
    this.#open = true;
    this.#ran = true;
    this.#steps = 0;
    this.#history.push({ role: 'user', content: task });
    let steps = 0;
    let stopHookActive = false;
    const end = (reason: EndReason, detail: string, answer?: string): RunResult => {
      const total = this.#history.usage;
      const result: RunResult = {
        reason,
        detail,
        steps,
        usage: total,
        ...(answer !== undefined ? { answer } : {}),
      };
      this.#emit({
        type: 'session-end',
        reason,
        detail,
        total,
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
      const limit = limitReached(this.limits, this.#history.usage, steps);
      if (limit) return end(limit.reason, limit.detail);
      try {
        await this.#compactor.maybeCompact(signal);
      } catch (error) {
        if (signal.aborted) return aborted();
        this.#emit({ type: 'error', message: `compaction failed: ${errorMessage(error)}` });
      }
      await this.#tools.reviewHeld();
      steps++;
      this.#steps = steps;
      const tools = this.tools();
      const system = systemPrompt(this.systemParts);
      this.#emit({
        type: 'step-start',
        step: steps,
        tools: tools.length,
        prefixHash: prefixHash(system, tools),
      });
      const step = await this.#step(tools, system, signal, steps);
      if ('failure' in step) {
        if (signal.aborted) return aborted();
        const hint = modelFailureHint(step.failure);
        const message = hint ? `${errorMessage(step.failure)} (${hint})` : errorMessage(step.failure);
        this.#emit({ type: 'error', message, code: 'MODEL_FAILED' });
        return end('error', `the model call failed: ${message}`);
      }
      if (step.loop === undefined) {
        const stop = await runHooks(
          this.#options.hooks,
          'Stop',
          { session_id: this.id, stop_hook_active: stopHookActive },
          { cwd: this.#cwd, signal },
        );
        for (const notice of hookNotices(stop.warnings)) this.#emit(notice);
        if (stop.decision === 'deny' && !stopHookActive) {
          // A Stop hook may send the model back to work once (Claude Code's semantics), with its reason.
          stopHookActive = true;
          this.#history.push({
            role: 'user',
            content: `A hook asked you to continue: ${stop.reason ?? 'the task is not done'}`,
          });
          continue;
        }
        return end('completed', `answered after ${steps} step${steps === 1 ? '' : 's'}`, step.text);
      }
      if (signal.aborted) return aborted();
      if (step.loop)
        return end(
          'loop',
          'the model kept calling the same tool with the same arguments after being told to stop',
        );
    }
  }

  /**
   * One step in its `tack.step` span: the model call and the tool calls it asked for (their spans are children).
   * `loop` is undefined when the model answered without a tool call.
   */
  #step(
    tools: readonly AgentTool[],
    system: string,
    signal: AbortSignal,
    step: number,
  ): Promise<{ failure: unknown } | { text: string; loop?: boolean }> {
    return inSpan(
      'tack.step',
      { attributes: { 'tack.step.number': step, 'tack.tools': tools.length } },
      async (span) => {
        let called: Awaited<ReturnType<TurnRunner['callModel']>>;
        try {
          called = await this.#turn.callModel(tools, system, signal, step);
        } catch (failure) {
          span.fail(errorTypeOf(failure));
          return { failure };
        }
        if (called.toolCalls.length === 0) return { text: called.text };
        span.set({ 'tack.tool_calls': called.toolCalls.length });
        return {
          text: called.text,
          loop: (await this.#turn.runCalls(called.toolCalls, step, signal)) === 'loop',
        };
      },
    );
  }

  /**
   * The user invoked skill `name` (the chat's `/skill-name`): its body as activate_skill gives it to the model,
   * for the user's turn, and the skill counts as active (not loaded twice, attached again after compaction).
   * A skill already active gives a line saying so; an unknown one throws UNKNOWN_SKILL naming the skills.
   */
  async activateSkill(name: string): Promise<{ text: string; alreadyActive: boolean }> {
    const skills = this.#options.skills;
    if (!skills)
      throw new TackError('UNKNOWN_SKILL', `no skill named "${name}"`, {
        hint: 'This session has no skills.',
      });
    const { text, alreadyActive } = await skills.activate(name, this.#activeSkills);
    return { text, alreadyActive };
  }

  /** Forces compaction now (`/compact`); returns what it did. */
  async compact(signal?: AbortSignal): Promise<CompactionEvent | undefined> {
    return this.#compactor.compact(true, signal ?? new AbortController().signal);
  }

  /**
   * No more runs. A session still open (closed before its first task, or during a run: the chat left, the
   * process got a signal or is exiting) gets its `session-end` now, reason `aborted`, so its transcript and the
   * index never show it running after its process is gone. Synchronous, so a process `exit` listener can call it.
   */
  close(cause = 'closed'): void {
    if (this.#open)
      this.#emit({
        type: 'session-end',
        reason: 'aborted',
        detail: this.#ran ? `${cause} while a task was running` : `${cause} before its first task`,
        total: this.#history.usage,
        steps: this.#steps,
      });
    this.#closed = true;
  }

  /** tack's own tools, in the order offered: skills, knowledge, the caller's, then `task`. */
  #nativeTools(activeSkills: Set<string>): NativeTool[] {
    const native = ownTools(this.#options, activeSkills);
    if ((this.#options.codeMode?.mode ?? 'off') !== 'off')
      pushAll(
        native,
        codeModeTools({
          tools: () => this.#tools.mcp(),
          run: (call, context) => this.#pipeline.run(call, context),
          options: this.#options.codeMode,
        }),
      );
    if (this.#options.subagents !== false && !this.#options.parent)
      native.push(
        subagentTool({
          sessionId: this.id,
          options: this.#options,
          guidelines: this.guidelines,
          limits: this.limits,
          taintedBy: () => this.#pipeline.taintedBy,
          taint: (source) => this.#pipeline.taint(source),
          addUsage: (usage) => this.#history.addUsage(usage),
          emit: (event) => this.#emit(event),
          create: (options) => AgentSession.create(options),
        }),
      );
    return native;
  }

  async #assemble(): Promise<void> {
    const { skills, knowledge, toolFilter } = this.#options;
    const { parts, skillsLeftOut } = await stableParts({
      guidelines: this.guidelines,
      skills,
      offersSkills: this.#tools.native.some(
        (t) => t.name === ACTIVATE_SKILL && (!toolFilter || toolFilter(t.name)),
      ),
      knowledge,
      contextWindow: this.#options.context?.window ?? DEFAULT_CONTEXT_WINDOW,
      model: this.#options.model.spec,
    });
    if (skills && skillsLeftOut > 0)
      this.#tools.addNative(nativeAgentTools([skillSearchTool(skills, skillsLeftOut)]));
    this.#system = parts;
  }

  #emit(event: AgentEvent): void {
    if (event.type === 'session-start') this.#open = true;
    if (event.type === 'session-end') {
      // A run that goes on after close() ended the session (a signal mid-step) does not end it twice.
      if (!this.#open) return;
      this.#open = false;
    }
    if (this.#options.transcript) this.#options.transcript.append(event);
    this.#options.onEvent?.(event);
  }
}
