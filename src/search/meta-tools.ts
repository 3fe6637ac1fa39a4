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
