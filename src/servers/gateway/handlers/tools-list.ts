import type { ListToolsResult, Tool } from '@modelcontextprotocol/client';
import { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from '../../../search/meta-tools.js';
import type { GatewayCore } from '../core.js';
import { codeModeTools } from './code-mode.js';

const META_TOOLS: Tool[] = [SEARCH_TOOLS_DEFINITION, CALL_TOOL_DEFINITION].map(
  (d) => JSON.parse(JSON.stringify(d)) as Tool,
);

/**
 * tools/list: the served tools of the current catalog (built once per catalog), or the two meta-tools; with
 * code mode on, run_code and code_api after them.
 */
export async function listTools(core: GatewayCore): Promise<ListToolsResult> {
  const view = await core.view();
  const code = core.codeMode ? codeModeTools(view) : [];
  if (view.searching) return { tools: code.length ? [...META_TOOLS, ...code] : META_TOOLS };
  view.tools ??= [
    // run_code and code_api are the gateway's own: an upstream tool served under either name is shadowed.
    ...[...view.names.tools]
      .filter(([name]) => !code.some((t) => t.name === name))
      .map(([name, tool]) => ({ ...tool.definition, name })),
    ...code,
  ];
  return { tools: view.tools };
}
