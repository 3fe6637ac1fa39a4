/**
 * The two tools a model is given instead of a large catalog (deferred loading): one to find tools, one to call
 * a found tool at once. Their definitions are the whole idle-turn cost of every deferred tool, so their text is
 * kept short; the harness and the gateway send exactly these.
 */

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

export const SEARCH_TOOLS_DEFINITION: MetaToolDefinition = {
  name: 'search_tools',
  description:
    'Search the catalog of tools not loaded yet; returns names, one-line descriptions and servers. The tools found are loaded from the next step on.',
  inputSchema: {
    type: 'object',
    properties: {
      query: { type: 'string', description: 'What the tool should do, in a few words' },
      k: { type: 'integer', minimum: 1, maximum: 20, default: 5, description: 'How many tools to return' },
    },
    required: ['query'],
    additionalProperties: false,
  },
};

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
 * What search_tools answers, in the harness and in the gateway alike: one line per hit (name, server, the first
 * line of its description), what to do next, and the servers that are down, so a missing tool is not mistaken
 * for a missing capability.
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
  if (hits.length === 0) return `No tool matches "${query}". Try other words.${notice}`;
  const lines = hits.map((hit, i) => {
    const line = (hit.tool.description ?? '').split('\n')[0]!.trim();
    return `${i + 1}. ${hit.tool.name} (server ${hit.tool.server}): ${line.length > 200 ? `${line.slice(0, 199)}…` : line}`;
  });
  return `${lines.join('\n')}\n${next}${notice}`;
}

/** Servers that are neither connected nor switched off: search_tools names them. */
export function downServers<T extends DownServer>(servers: readonly T[]): T[] {
  return servers.filter((s) => s.status !== 'connected' && s.status !== 'disabled');
}

/** search_tools' arguments, checked: a non-empty query and k in 1..20 (default 5); or what to tell the model. */
export function searchToolsInput(
  input: Record<string, unknown> | undefined,
): { query: string; k: number } | { error: string } {
  const query = typeof input?.query === 'string' ? input.query.trim() : '';
  if (!query) return { error: `${SEARCH_TOOLS_DEFINITION.name}: "query" must be a non-empty string` };
  const k = input?.k;
  return { query, k: typeof k === 'number' && Number.isInteger(k) && k > 0 ? Math.min(k, 20) : 5 };
}
