import type { CallToolResult } from '@modelcontextprotocol/client';
import { answerSearchTools, searchToolsInput } from '../../../search/meta-tools.js';
import { searchableTool, serverProfiles, ToolSearchIndex } from '../../../search/tool-index.js';
import type { GatewayCore } from '../core.js';

/** search_tools over the served tools of the current catalog (the index is built once per catalog). */
export async function searchTools(
  core: GatewayCore,
  input: Record<string, unknown> | undefined,
  signal?: AbortSignal,
): Promise<CallToolResult> {
  const args = searchToolsInput(input);
  if ('error' in args) return { isError: true, content: [{ type: 'text', text: args.error }] };
  const view = await core.view();
  if (!view.search) {
    const tools = [...view.names.tools].map(([name, tool]) =>
      searchableTool(name, tool.server, tool.definition),
    );
    const cache = core.toolTerms;
    view.search = {
      tools,
      index: ToolSearchIndex.build(tools, { servers: serverProfiles(core.host.servers()), terms: cache }),
    };
    const saved = cache?.save();
    const problem = saved && !saved.ok ? saved.message : cache?.problem;
    if (problem) core.warnOnce('INDEX_CACHE', `tool search terms: ${problem}`);
  }
  const answer = await answerSearchTools(view.search.index, view.search.tools, args, {
    semantic: core.semantic,
    signal,
    down: core.host.servers(),
    next: 'Run one with call_tool.',
  });
  return {
    content: [{ type: 'text', text: answer.text }],
    structuredContent: {
      tools: answer.hits.map((h) => ({
        name: h.tool.name,
        server: h.tool.server,
        description: h.tool.description ?? '',
        score: h.score,
      })),
      semantic: answer.semantic,
    },
  };
}
