import type { ListToolsResult, Tool } from '@modelcontextprotocol/client';
import { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from '../../../search/meta-tools.js';
import type { GatewayCore } from '../core.js';

const META_TOOLS: Tool[] = [SEARCH_TOOLS_DEFINITION, CALL_TOOL_DEFINITION].map(
  (d) => JSON.parse(JSON.stringify(d)) as Tool,
);

/** tools/list: the served tools of the current catalog (built once per catalog), or the two meta-tools. */
export async function listTools(core: GatewayCore): Promise<ListToolsResult> {
  const view = await core.view();
  if (view.searching) return { tools: META_TOOLS };
  view.tools ??= [...view.names.tools].map(([name, tool]) => ({ ...tool.definition, name }));
  return { tools: view.tools };
}
