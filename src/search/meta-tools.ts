/**
 * The two tools a model is given instead of a large catalog (deferred loading): one to find tools, one to call
 * a found tool at once. Their definitions are the whole idle-turn cost of every deferred tool, so their text is
 * kept short; the harness and the gateway send exactly these, check their arguments here and answer
 * search_tools with answerSearchTools.
 */

import { hybridSearch, type SemanticRanker, type SemanticState } from './semantic.js';
import type { SearchableTool, ToolHit, ToolSearchIndex } from './tool-index.js';

export interface MetaToolDefinition {
  readonly name: string;
  readonly description: string;
  readonly inputSchema: {
    readonly type: 'object';
    readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
    readonly required: readonly string[];
    readonly additionalProperties: false;
  };
}

/** Capability queries one search_tools call takes at most. */
export const MAX_QUERIES = 8;

/**
 * Characters of one query. A query is a few words; ranking a 4 MB one took about a second of a shared gateway's
 * event loop (issue 28), so a longer one is refused rather than ranked.
 */
export const MAX_QUERY_CHARS = 1_000;

/**
 * The description teaches what ranks well (measured in docs/tool-search.md): one short query per capability, in
 * the words a tool would use, rather than the user's whole request, whose strongest need crowds out the rest.
 */
export const SEARCH_TOOLS_DEFINITION: MetaToolDefinition = {
  name: 'search_tools',
  description:
    'Find tools not loaded yet. Pass one short query per capability the task needs, in the words a tool would use (e.g. ["search flights", "send email"]), not the whole request. Returns the best tools by server; they load from your next step on.',
  inputSchema: {
    type: 'object',
    properties: {
      queries: {
        type: 'array',
        items: { type: 'string' },
        minItems: 1,
        maxItems: MAX_QUERIES,
        description: 'One short query per capability',
      },
      query: { type: 'string', description: 'A single query' },
      k: {
        type: 'integer',
        minimum: 1,
        maximum: 20,
        description: 'How many tools in all (default 5, or 3 per query)',
      },
    },
    required: [],
    additionalProperties: false,
  },
};

/** The call_tool meta-tool: calls a tool search_tools found, by its name. */
export const CALL_TOOL_DEFINITION: MetaToolDefinition = {
  name: 'call_tool',
  description: 'Call a tool found with search_tools at once.',
  inputSchema: {
    type: 'object',
    properties: {
      name: { type: 'string', description: 'The tool name search_tools returned' },
      arguments: { type: 'object', description: "The tool's arguments" },
    },
    required: ['name', 'arguments'],
    additionalProperties: false,
  },
};

/** A server that is not connected, as search_tools reports it. */
export interface DownServer {
  name: string;
  status: string;
  error?: { message: string } | undefined;
}

/**
 * Hits grouped by server: servers in the order of their best tool, each server's tools in rank order. A task's
 * tools usually come from a few servers, and a model reads a server's tools together more easily than a
 * ranking that alternates between them.
 */
export function groupByServer<T extends { tool: { server: string } }>(hits: readonly T[]): T[] {
  const groups = new Map<string, T[]>();
  for (const hit of hits) {
    const group = groups.get(hit.tool.server);
    if (group) group.push(hit);
    else groups.set(hit.tool.server, [hit]);
  }
  return [...groups.values()].flat();
}

/**
 * What search_tools answers, in the harness and in the gateway alike: one line per hit (name, server, the first
 * line of its description), grouped by server, what to do next, and the servers that are down, so a missing tool
 * is not mistaken for a missing capability.
 */
export function formatToolHits(
  query: string,
  hits: ReadonlyArray<{ tool: { name: string; server: string; description?: string | undefined } }>,
  down: readonly DownServer[],
  next: string,
): string {
  const notice =
    down.length > 0
      ? `\nNot searchable now (their tools are missing from the results): ${down
          .map((s) => `${s.name} (${s.status}${s.error ? `: ${s.error.message.split('\n')[0]}` : ''})`)
          .join('; ')}.`
      : '';
  if (hits.length === 0) return `No tool matches ${query}. Try other words.${notice}`;
  const lines = groupByServer(hits).map((hit, i) => {
    const line = (hit.tool.description ?? '').split('\n')[0]!.trim();
    return `${i + 1}. ${hit.tool.name} (server ${hit.tool.server}): ${line.length > 200 ? `${line.slice(0, 199)}…` : line}`;
  });
  return `${lines.join('\n')}\n${next}${notice}`;
}

/** Servers that are neither connected nor switched off: search_tools names them. */
export function downServers<T extends DownServer>(servers: readonly T[]): T[] {
  return servers.filter((s) => s.status !== 'connected' && s.status !== 'disabled');
}

/** search_tools' arguments, checked. */
export interface SearchToolsInput {
  /** One or more queries (`query` and `queries` together), trimmed, duplicates dropped. */
  queries: string[];
  /** 1..20; default 5 for one query, 3 per query for several. */
  k: number;
}

/** `"a"` or `"a", "b"`: the queries as the answer names them. */
export function quoteQueries(queries: readonly string[]): string {
  return queries.map((q) => `"${q}"`).join(', ');
}

/**
 * search_tools' arguments, checked: `queries` (1..8 non-empty strings) and/or `query`, and k; or what to tell the
 * model. A model that sends the whole list as one string, or a string where a list goes, is met halfway.
 */
export function searchToolsInput(
  input: Record<string, unknown> | undefined,
): SearchToolsInput | { error: string } {
  const name = SEARCH_TOOLS_DEFINITION.name;
  const raw = input?.queries;
  const list: unknown[] = raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
  if (list.some((q) => typeof q !== 'string'))
    return { error: `${name}: "queries" must be a list of strings, one short query per capability` };
  if (input?.query !== undefined && typeof input.query !== 'string')
    return { error: `${name}: "query" must be a string` };
  const all = [...(typeof input?.query === 'string' ? [input.query] : []), ...(list as string[])]
    .map((q) => q.trim())
    .filter((q) => q !== '');
  const queries = [...new Set(all)];
  if (queries.length === 0)
    return { error: `${name}: give "queries" (one short query per capability) or "query", not empty` };
  if (queries.length > MAX_QUERIES)
    return { error: `${name}: at most ${MAX_QUERIES} queries at once; search again for the rest` };
  if (queries.some((q) => q.length > MAX_QUERY_CHARS))
    return {
      error: `${name}: a query is at most ${MAX_QUERY_CHARS} characters; give a few words per capability (e.g. "search flights")`,
    };
  const k = input?.k;
  const fallback = queries.length === 1 ? 5 : Math.min(20, 3 * queries.length);
  return { queries, k: typeof k === 'number' && Number.isInteger(k) && k > 0 ? Math.min(k, 20) : fallback };
}

/** Whether `name` is one of the two meta-tools. */
export function isMetaTool(name: string): boolean {
  return name === SEARCH_TOOLS_DEFINITION.name || name === CALL_TOOL_DEFINITION.name;
}

/** call_tool's arguments, checked: the tool to run and its arguments; or what to tell the model. */
export function callToolInput(
  input: Readonly<Record<string, unknown>> | undefined,
): { name: string; arguments: Record<string, unknown> } | { error: string } {
  const name = input?.name;
  const args = input?.arguments;
  if (typeof name !== 'string')
    return {
      error: `${CALL_TOOL_DEFINITION.name} expects {"name": "<a name from ${SEARCH_TOOLS_DEFINITION.name}>", "arguments": {...}}`,
    };
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args)))
    return { error: `${CALL_TOOL_DEFINITION.name}: "arguments" must be an object` };
  return { name, arguments: (args ?? {}) as Record<string, unknown> };
}

/** One search_tools answer: the text the model reads and the hits behind it, grouped by server. */
export interface SearchToolsAnswer {
  text: string;
  hits: ToolHit[];
  semantic: SemanticState;
}

/**
 * Runs search_tools over an index (lexical, fused with the semantic ranking when there is one) and words the
 * answer: the one search both the harness and the gateway run. `next` says what the model can do with a hit.
 */
export async function answerSearchTools(
  index: ToolSearchIndex,
  tools: readonly SearchableTool[],
  input: SearchToolsInput,
  options: {
    semantic?: SemanticRanker | undefined;
    signal?: AbortSignal | undefined;
    down: readonly DownServer[];
    next: string;
  },
): Promise<SearchToolsAnswer> {
  const { hits, semantic } = await hybridSearch(index, tools, input.queries, input.k, options.semantic, {
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const grouped = groupByServer(hits);
  return {
    text: formatToolHits(quoteQueries(input.queries), grouped, downServers(options.down), options.next),
    hits: grouped,
    semantic,
  };
}
