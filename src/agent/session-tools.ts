import { computationTool } from '../knowledge/runtimes.js';
import { knowledgeTools } from '../knowledge/tools.js';
import type { Catalog } from '../mcp/catalog.js';
import type { McpHost } from '../mcp/host.js';
import { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION, searchToolsInput } from '../search/meta-tools.js';
import { trifectaLegs } from '../security/capabilities.js';
import { skillTools } from '../skills/tools.js';
import type { NativeTool } from '../tools/native.js';
import { pushAll } from '../util/arrays.js';
import { CODE_API, type CodeModeOptions, offersCodeMode, RUN_CODE } from './code-mode.js';
import type { HeldReview } from './held.js';
import type { AgentOptions } from './options.js';
import { CALL_TOOL, DeferredTools, SEARCH_TOOLS, type ToolSearchOptions } from './tool-search.js';
import { type AgentTool, mcpAgentTools, nativeAgentTools, type ToolServerSettings } from './toolset.js';

/**
 * tack's own tools for a session, as each declares itself: skills (when any are installed), knowledge (when a
 * bundle is loaded; run_computation with a runtime), then the caller's. The `task` tool is the session's to add.
 */
export function ownTools(
  options: Pick<AgentOptions, 'skills' | 'knowledge' | 'computations' | 'tools' | 'config'>,
  activeSkills: Set<string>,
): NativeTool[] {
  const { skills, knowledge, computations } = options;
  const native: NativeTool[] = [];
  if (skills && skills.skills.length > 0)
    // run_skill_script declares alwaysAsk: the gate asks with the arguments; the skill runs once allowed.
    pushAll(
      native,
      skillTools(skills, {
        active: activeSkills,
        approve: () => true,
        sandbox: options.config?.sandbox?.skillScripts,
      }),
    );
  if (knowledge && knowledge.size > 0) {
    pushAll(native, knowledgeTools(knowledge));
    if (computations && computations.executors.length > 0)
      native.push(computationTool(knowledge, computations));
  }
  pushAll(native, options.tools ?? []);
  return native;
}

export interface SessionToolsOptions {
  host: McpHost | undefined;
  /** The servers' settings (`trusted`, `capabilities`), by name. */
  settings: ReadonlyMap<string, ToolServerSettings>;
  /** tack's own tools, mapped (toolset.ts nativeAgentTools). */
  native: AgentTool[];
  toolFilter?: ((name: string) => boolean) | undefined;
  toolSearch?: ToolSearchOptions | undefined;
  contextWindow: number;
  held: HeldReview;
  /** Code mode: run_code and code_api are among `native`, offered when this says so (code-mode.ts). */
  codeMode?: CodeModeOptions | undefined;
}

/**
 * The tools of a session: tack's own, and every MCP tool of the host's catalog (mapped and reviewed once per
 * catalog: the host rebuilds it on every change), less the held ones and what the filter leaves out; past the
 * deferral threshold, a step offers search_tools and call_tool and only the MCP tools loaded so far.
 */
export class SessionTools {
  #codeModeOffer: { mcp: readonly AgentTool[]; deferring: boolean; offered: boolean } | undefined;
  readonly #options: SessionToolsOptions;
  readonly #native: AgentTool[];
  readonly #deferred: DeferredTools;
  readonly #meta: AgentTool[];
  #mcp: { catalog: Catalog; tools: AgentTool[] } | undefined;

  constructor(options: SessionToolsOptions) {
    this.#options = options;
    this.#native = [...options.native];
    this.#deferred = new DeferredTools(options.host, options.toolSearch);
    this.#meta = this.#searchTools();
  }

  /** tack's own tools (before the filter). */
  get native(): readonly AgentTool[] {
    return this.#native;
  }

  /** Adds native tools found to be needed once the context is assembled (search_skills). */
  addNative(tools: readonly AgentTool[]): void {
    for (const tool of tools) if (!this.#native.some((t) => t.name === tool.name)) this.#native.push(tool);
  }

  /**
   * Brings the MCP tools up to date with the host's catalog: a new catalog is reviewed by the pins guard and
   * mapped again. A held definition accepted meanwhile (`tack pins accept` in another terminal, or another
   * `tack serve` instance sharing the store) is seen once `invalidate` was called (the review before each step
   * does). Asynchronous because the guard reads and writes the store, which may be a PostgreSQL server.
   */
  async refresh(): Promise<void> {
    const host = this.#options.host;
    if (!host || this.#mcp?.catalog === host.catalog) return;
    const catalog = host.catalog;
    await this.#options.held.review(host, catalog);
    // A refresh started later may have finished first with a newer catalog: the newest review stands.
    if (this.#mcp && this.#mcp.catalog === host.catalog && catalog !== host.catalog) return;
    const heldTools = this.#options.held.heldTools();
    const entries = catalog.tools.filter((t) => !heldTools.has(t.name));
    this.#mcp = { catalog, tools: mcpAgentTools(host, this.#options.settings, entries) };
  }

  /** The next refresh reviews and maps the catalog again, changed or not. */
  invalidate(): void {
    this.#mcp = undefined;
  }

  /**
   * Every MCP tool the session may use (after the filter), loaded or not: as of the last refresh when definitions
   * are pinned (the review is asynchronous), else the host's current catalog, mapped on the spot.
   */
  mcp(): AgentTool[] {
    const host = this.#options.host;
    if (!host || this.#mcp?.catalog === host.catalog) return this.#mcpAsOfRefresh();
    if (!this.#options.held.pinning) {
      this.#mcp = {
        catalog: host.catalog,
        tools: mcpAgentTools(host, this.#options.settings, host.catalog.tools),
      };
      return this.#mcpAsOfRefresh();
    }
    // The catalog changed since the guard's last review, which the next refresh does: until then only the tools
    // whose definition is the very one reviewed (the host keeps an unchanged server's listing as it was).
    const reviewed = this.#mcp?.catalog;
    return this.#mcpAsOfRefresh().filter(
      (t) =>
        reviewed !== undefined &&
        host.catalog.getTool(t.name)?.definition === reviewed.getTool(t.name)?.definition,
    );
  }

  /** What the next step offers, after the filter: see AgentSession.tools. */
  visible(): AgentTool[] {
    const mcp = this.mcp();
    const { tools, deferred } = this.#deferred.visible(mcp, this.#options.contextWindow);
    const native = this.#offersCodeMode(mcp, deferred)
      ? this.#native
      : this.#native.filter((t) => t.name !== RUN_CODE && t.name !== CODE_API);
    const all = [...native, ...(deferred ? this.#meta : []), ...tools];
    const filter = this.#options.toolFilter;
    return filter
      ? all.filter((t) => filter(t.name) || t.name === SEARCH_TOOLS || t.name === CALL_TOOL)
      : all;
  }

  /** Whether run_code is offered, as of the last refresh (no review, no store read). */
  get codeMode(): boolean {
    const mcp = this.#mcpAsOfRefresh();
    return this.#offersCodeMode(mcp, this.deferring);
  }

  /**
   * offersCodeMode, remembered for the tools it was last asked about: with `auto` it builds code mode's whole
   * system part to size it, and a step asks twice (the tools it offers, the system prompt) of an unchanged list.
   */
  #offersCodeMode(mcp: readonly AgentTool[], deferring: boolean): boolean {
    const last = this.#codeModeOffer;
    if (
      last?.deferring === deferring &&
      last.mcp.length === mcp.length &&
      last.mcp.every((tool, i) => tool === mcp[i])
    )
      return last.offered;
    const offered = offersCodeMode(this.#options.codeMode, mcp, deferring);
    this.#codeModeOffer = { mcp, deferring, offered };
    return offered;
  }

  /** Every MCP tool the session may use, as of the last refresh (no review, no store read). */
  mcpAsOfRefresh(): AgentTool[] {
    return this.#mcpAsOfRefresh();
  }

  /** Whether MCP tools are deferred, as of the last refresh (no review, no store read). */
  get deferring(): boolean {
    return this.#deferred.defers(this.#mcpAsOfRefresh(), this.#options.contextWindow);
  }

  /**
   * The tool a call names: one the step offers, or any MCP tool the session may use (a tool loaded by a search
   * in the same step is found too). Undefined for a name the session does not have, or a held tool.
   */
  find(name: string): AgentTool | undefined {
    const filter = this.#options.toolFilter;
    if (name === SEARCH_TOOLS || name === CALL_TOOL) {
      const meta = this.#deferred.defers(this.mcp(), this.#options.contextWindow)
        ? this.#meta.find((t) => t.name === name)
        : undefined;
      if (meta) return meta;
    }
    return (
      this.#native.find((t) => t.name === name && (!filter || filter(name))) ??
      this.mcp().find((t) => t.name === name)
    );
  }

  /** A tool was called: it stays loaded, and the search that found it becomes an example. */
  used(tool: AgentTool): void {
    if (!tool.native) this.#deferred.used(tool);
  }

  /**
   * Before each step: a held definition accepted meanwhile (`tack pins accept` in another terminal) is offered
   * again, and each one still held is put to the reviewer once; an accepted one is offered from this step on.
   */
  async reviewHeld(): Promise<void> {
    const held = this.#options.held;
    if (!held.pinning) return;
    await this.refresh();
    if (await held.released()) {
      this.invalidate();
      await this.refresh();
    }
    if (!held.asks) return;
    if (await held.ask()) {
      this.invalidate();
      await this.refresh();
    }
  }

  /** tack's own tools (unfiltered) and every MCP tool the session may use: what the guard knows labels of. */
  all(): AgentTool[] {
    return [...this.#native, ...this.mcp()];
  }

  /** The lethal-trifecta flag: said before the session starts when its tools hold all three legs. */
  trifectaNotice(): string | undefined {
    const tools = this.all().map((t) => ({ name: t.name, labels: t.capabilities ?? [] }));
    const legs = trifectaLegs(tools);
    if (Object.values(legs).some((holders) => holders.length === 0)) return undefined;
    const show = (names: string[]) => names.slice(0, 3).join(', ') + (names.length > 3 ? ', …' : '');
    return `lethal trifecta: this session can read untrusted input (${show(legs['untrusted-input'])}), reach private data (${show(legs['private-data'])}) and send data out (${show(legs.egress)}); once untrusted input is read, every egress call asks`;
  }

  #mcpAsOfRefresh(): AgentTool[] {
    const mcp = this.#mcp?.tools ?? [];
    const filter = this.#options.toolFilter;
    return filter ? mcp.filter((t) => filter(t.name)) : mcp;
  }

  /** search_tools and call_tool; they read only the catalog (no labels). */
  #searchTools(): AgentTool[] {
    const search: NativeTool = {
      ...mutable(SEARCH_TOOLS_DEFINITION),
      capabilities: [],
      execute: async (input, context) => {
        const args = searchToolsInput(input);
        if ('error' in args) return { text: args.error, isError: true };
        return { text: await this.#deferred.search(args.queries, args.k, this.mcp(), context?.signal) };
      },
    };
    // call_tool never runs itself: the tool pipeline routes it to the tool it names, through the same approval.
    const call: NativeTool = {
      ...mutable(CALL_TOOL_DEFINITION),
      capabilities: [],
      execute: async () => ({ text: `${CALL_TOOL} is routed by the session`, isError: true }),
    };
    return nativeAgentTools([search, call]);
  }
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
