/**
 * `tack/search`: tool search over a catalog (the ranked index, hybrid semantic ranking), the
 * search_tools/call_tool meta-tool definitions.
 */

export { configuredSemanticRanker } from '../search/embeddings.js';
export { CALL_TOOL_DEFINITION, SEARCH_TOOLS_DEFINITION } from '../search/meta-tools.js';
export { hybridSearch } from '../search/semantic.js';
export {
  type SearchableTool,
  searchableTool,
  type ToolHit,
  ToolSearchIndex,
} from '../search/tool-index.js';
