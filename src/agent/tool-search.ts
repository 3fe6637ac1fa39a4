import type { Catalog } from '../mcp/catalog.js';
import type { McpHost } from '../mcp/host.js';
import { answerSearchTools, CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from '../search/meta-tools.js';
import type { SemanticRanker } from '../search/semantic.js';
import type { ToolTermCache } from '../search/term-cache.js';
import {
  type SearchableTool,
  type ServerProfile,
  serverProfiles,
  ToolSearchIndex,
} from '../search/tool-index.js';
import { estimateTextTokens, toolDefinitionText } from '../tokens/count.js';
import { sendWarning, type WarningSink } from '../util/warnings.js';
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
    record(server: string, tool: string, query: string): Promise<void>;
    all(): Promise<Map<string, Map<string, string[]>>>;
  };
  /**
   * Semantic ranking (tack.json `toolSearch.embeddings`), fused with the lexical one; the search is lexical
   * while its endpoint is down.
   */
  semantic?: SemanticRanker;
  /**
   * Search terms of the catalog kept between sessions (`<state>/indexes/tool-terms.idx`): a large catalog's
   * index is built without tokenizing the servers that did not change. Written after each index update that
   * tokenized.
   */
  terms?: ToolTermCache;
  /** Where a term cache that could not be used or written is reported (INDEX_CACHE). */
  onWarning?: WarningSink;
}

/** Server names the deferred-loading notice lists at most: past that, the count says the rest. */
const NOTICE_SERVERS = 40;

/**
 * The system part a deferring session adds: which servers' tools are waiting, and how to search them (the same
 * advice as search_tools' description: one short query per capability, in a tool's words).
 */
export function deferredToolsPart(host: McpHost | undefined): { name: string; text: string } | undefined {
  const servers = (host?.servers() ?? []).filter((s) => s.status === 'connected').map((s) => s.name);
  if (servers.length === 0) return undefined;
  const named = servers.slice(0, NOTICE_SERVERS).join(', ');
  const more = servers.length > NOTICE_SERVERS ? ` and ${servers.length - NOTICE_SERVERS} more` : '';
  return {
    name: 'deferred tools',
    text: `<deferred_tools>The tools of these servers are not loaded: ${named}${more}. Before you say a capability is missing, find it with ${SEARCH_TOOLS}: split the task into the capabilities it needs and pass one short query per capability in "queries", worded as a tool would describe itself ("send email", not the whole request). Call a found tool from your next step on, or at once with ${CALL_TOOL}.</deferred_tools>`,
  };
}

/** One definition's tokens by the estimate (no tokenizer to load): enough to decide whether to defer. */
function definitionTokens(tool: AgentTool): number {
  return estimateTextTokens(toolDefinitionText(tool));
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
  /** What each server's tools were indexed from, and the objects indexed. */
  #perServer = new Map<string, { key: string; tools: SearchableTool[] }>();
  #tools: SearchableTool[] = [];
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
    // Not awaited: examples improve later searches; keeping one must neither delay nor fail the call.
    this.#options.examples?.record(tool.server, tool.serverToolName ?? tool.name, query).catch(() => {});
  }

  get loaded(): ReadonlySet<string> {
    return this.#loaded;
  }

  /**
   * search_tools: the best k tools for one or several capability queries (merged by reciprocal rank fusion, and
   * with the semantic ranking when configured), grouped by server with their first description line, loaded from
   * the next step on; servers that are down are named, so a missing tool is not mistaken for a missing
   * capability.
   */
  async search(
    queries: readonly string[],
    k: number,
    mcp: readonly AgentTool[],
    signal?: AbortSignal,
  ): Promise<string> {
    const { index, tools } = await this.#ensureIndex(mcp);
    const { hits, text } = await answerSearchTools(
      index,
      tools,
      { queries: [...queries], k },
      {
        semantic: this.#options.semantic,
        signal,
        down: this.#host?.servers() ?? [],
        next: `These tools are loaded from your next step on; or run one now with ${CALL_TOOL}.`,
      },
    );
    // The words that found a tool: the query of the several whose own list ranks it best.
    const perQuery = queries.length > 1 ? queries.map((q) => index.search(q, Math.max(k, 20))) : [];
    for (const hit of hits) {
      this.load(hit.tool.name);
      if (this.#foundBy.has(hit.tool.name)) continue;
      let best = queries[0]!;
      let bestRank = Number.POSITIVE_INFINITY;
      perQuery.forEach((list, i) => {
        const rank = list.findIndex((h) => h.tool.name === hit.tool.name);
        if (rank >= 0 && rank < bestRank) {
          bestRank = rank;
          best = queries[i]!;
        }
      });
      this.#foundBy.set(hit.tool.name, best);
    }
    return text;
  }

  /** The index over the MCP tools, following the catalog: only servers whose tools changed are re-indexed. */
  async #ensureIndex(
    mcp: readonly AgentTool[],
  ): Promise<{ index: ToolSearchIndex; tools: SearchableTool[] }> {
    const catalog = this.#host?.catalog;
    if (this.#index && catalog === this.#indexed) return { index: this.#index, tools: this.#tools };
    let learned = new Map<string, Map<string, string[]>>();
    try {
      learned = (await this.#options.examples?.all()) ?? learned;
    } catch {
      // A store that cannot be read: search without examples.
    }
    const byServer = new Map<string, AgentTool[]>();
    for (const t of mcp) {
      const list = byServer.get(t.server ?? '') ?? [];
      list.push(t);
      byServer.set(t.server ?? '', list);
    }
    const profiles = serverProfiles(this.#host?.servers() ?? []);
    const cache = this.#options.terms;
    if (!this.#index && cache?.problem)
      sendWarning(this.#options.onWarning, {
        code: 'INDEX_CACHE',
        message: `tool search: the kept search terms were not used, so every server is tokenized: ${cache.problem}`,
      });
    this.#index ??= ToolSearchIndex.build([], { terms: cache });
    const index = this.#index;
    const next = new Map<string, { key: string; tools: SearchableTool[] }>();
    for (const [server, agentTools] of byServer) {
      const tools = agentTools.map((t): SearchableTool => {
        const examples = learned.get(server)?.get(t.serverToolName ?? t.name);
        return {
          server,
          name: t.name,
          description: t.description,
          inputSchema: t.inputSchema,
          ...(examples ? { examples } : {}),
        };
      });
      const profile: ServerProfile = profiles[server] ?? {};
      const key = JSON.stringify([tools.map((t) => [t.name, t.description, t.examples]), profile]);
      const before = this.#perServer.get(server);
      // An unchanged server keeps its indexed objects: the semantic ranker matches hits by identity.
      if (before?.key === key) next.set(server, before);
      else {
        index.replaceServer(server, tools, profile);
        next.set(server, { key, tools });
      }
    }
    for (const server of this.#perServer.keys()) if (!byServer.has(server)) index.removeServer(server);
    const saved = cache?.save();
    if (saved && !saved.ok)
      sendWarning(this.#options.onWarning, {
        code: 'INDEX_CACHE',
        message: `tool search: the tokens were not kept: ${saved.message}`,
      });
    this.#perServer = next;
    this.#tools = [...next.values()].flatMap((entry) => entry.tools);
    this.#indexed = catalog;
    return { index, tools: this.#tools };
  }
}
