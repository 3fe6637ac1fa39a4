import type { Catalog } from '../mcp/catalog.js';
import type { McpHost } from '../mcp/host.js';
import {
  CALL_TOOL_DEFINITION,
  downServers,
  formatToolHits,
  SEARCH_TOOLS_DEFINITION,
} from '../search/meta-tools.js';
import { instructionsByServer, type SearchableTool, ToolSearchIndex } from '../search/tool-index.js';
import type { AgentTool } from './toolset.js';

export const SEARCH_TOOLS = SEARCH_TOOLS_DEFINITION.name;
export const CALL_TOOL = CALL_TOOL_DEFINITION.name;

/** `auto` defers past the threshold, `on` always, `off` never. */
export type ToolSearchMode = 'auto' | 'on' | 'off';

export interface ToolSearchOptions {
  mode?: ToolSearchMode;
  /** Defer when the definitions would take more than this share of the context window (default 0.1). */
  share?: number;
  /** ...or when there are more tools than this (default 40). */
  maxTools?: number;
  /** Tools sent every step even when deferring (tack.json `alwaysLoad`, per server or per tool). */
  alwaysLoad?: (tool: AgentTool) => boolean;
  /**
   * Where requests that led to a tool are kept (the store's `toolExamples`): a search followed by a call of
   * what it found is recorded, and indexed as that tool's examples in later sessions.
   */
  examples?: {
    record(server: string, tool: string, query: string): void;
    all(): Map<string, Map<string, string[]>>;
  };
}

/** A rough token count of one definition, enough to decide whether to defer; no tokenizer to load. */
function definitionTokens(tool: AgentTool): number {
  return Math.ceil(
    (tool.name.length + tool.description.length + JSON.stringify(tool.inputSchema).length) / 4,
  );
}

/**
 * Deferred loading: past the threshold, a step offers tack's own tools, `search_tools`, `call_tool`, the tools
 * marked always-load and the tools this session has found or used, instead of every MCP tool. The search index
 * follows the host's catalog (rebuilt per server when one changes), so a list_changed is searchable at once.
 */
export class DeferredTools {
  readonly #host: McpHost | undefined;
  readonly #options: ToolSearchOptions;
  readonly #loaded = new Set<string>();
  #index: ToolSearchIndex | undefined;
  #indexed: Catalog | undefined;
  #perServer = new Map<string, string>();
  /** The query that found each tool in this session, until the tool is used (then it becomes an example). */
  readonly #foundBy = new Map<string, string>();

  constructor(host: McpHost | undefined, options: ToolSearchOptions = {}) {
    this.#host = host;
    this.#options = options;
  }

  /** Whether this set of MCP tools is deferred in a window of this size. */
  defers(mcp: readonly AgentTool[], contextWindow: number): boolean {
    const mode = this.#options.mode ?? 'auto';
    if (mode === 'off' || mcp.length === 0) return false;
    if (mode === 'on') return true;
    const tokens = mcp.reduce((n, t) => n + definitionTokens(t), 0);
    return (
      tokens > (this.#options.share ?? 0.1) * contextWindow || mcp.length > (this.#options.maxTools ?? 40)
    );
  }

  /** The MCP tools to send this step: all of them, or the always-loaded and the loaded ones. */
  visible(mcp: readonly AgentTool[], contextWindow: number): { tools: AgentTool[]; deferred: boolean } {
    if (!this.defers(mcp, contextWindow)) return { tools: [...mcp], deferred: false };
    const always = this.#options.alwaysLoad;
    return {
      tools: mcp.filter((t) => this.#loaded.has(t.name) || (always ? always(t) : false)),
      deferred: true,
    };
  }

  /** A tool the model found or used stays loaded for the rest of the session. */
  load(name: string): void {
    this.#loaded.add(name);
  }

  /** A tool was called: if a search found it, that search's words become an example of it. */
  used(tool: AgentTool): void {
    this.load(tool.name);
    const query = this.#foundBy.get(tool.name);
    if (query === undefined || !tool.server) return;
    this.#foundBy.delete(tool.name);
    try {
      this.#options.examples?.record(tool.server, tool.serverToolName ?? tool.name, query);
    } catch {
      // Examples improve later searches; failing to keep one must not fail the call.
    }
  }

  get loaded(): ReadonlySet<string> {
    return this.#loaded;
  }

  /**
   * search_tools: the best k tools with their server and first description line, loaded from the next step on;
   * servers that are down are named, so a missing tool is not mistaken for a missing capability.
   */
  search(query: string, k: number, mcp: readonly AgentTool[]): string {
    const index = this.#ensureIndex(mcp);
    const hits = index.search(query, k);
    for (const hit of hits) {
      this.load(hit.tool.name);
      if (!this.#foundBy.has(hit.tool.name)) this.#foundBy.set(hit.tool.name, query);
    }
    return formatToolHits(
      query,
      hits,
      downServers(this.#host?.servers() ?? []),
      `These tools are loaded from your next step on; or run one now with ${CALL_TOOL}.`,
    );
  }

  #ensureIndex(mcp: readonly AgentTool[]): ToolSearchIndex {
    const catalog = this.#host?.catalog;
    if (this.#index && catalog === this.#indexed) return this.#index;
    const byServer = new Map<string, SearchableTool[]>();
    let learned = new Map<string, Map<string, string[]>>();
    try {
      learned = this.#options.examples?.all() ?? learned;
    } catch {
      // A store that cannot be read: search without examples.
    }
    for (const t of mcp) {
      const list = byServer.get(t.server ?? '') ?? [];
      const examples = learned.get(t.server ?? '')?.get(t.serverToolName ?? t.name);
      list.push({
        server: t.server ?? '',
        name: t.name,
        description: t.description,
        inputSchema: t.inputSchema,
        ...(examples ? { examples } : {}),
      });
      byServer.set(t.server ?? '', list);
    }
    const instructions = instructionsByServer(this.#host?.servers() ?? []);
    if (!this.#index) {
      this.#index = ToolSearchIndex.build([...byServer.values()].flat(), {
        serverInstructions: instructions,
      });
    } else {
      // Rebuild only the servers whose tools changed.
      for (const [server, tools] of byServer) {
        const key = JSON.stringify(tools.map((t) => [t.name, t.description]));
        if (this.#perServer.get(server) !== key)
          this.#index.replaceServer(server, tools, instructions[server]);
      }
      for (const server of this.#perServer.keys())
        if (!byServer.has(server)) this.#index.removeServer(server);
    }
    this.#perServer = new Map(
      [...byServer].map(([server, tools]) => [
        server,
        JSON.stringify(tools.map((t) => [t.name, t.description])),
      ]),
    );
    this.#indexed = catalog;
    return this.#index;
  }
}
