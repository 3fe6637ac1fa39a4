/**
 * `tack/search`: tool search over a catalog (the ranked index, hybrid semantic ranking), the
 * search_tools/call_tool meta-tool definitions.
 */

export { configuredSemanticRanker } from '../search/embeddings.js';
export { CALL_TOOL_DEFINITION, groupByServer, SEARCH_TOOLS_DEFINITION } from '../search/meta-tools.js';
export { hybridSearch } from '../search/semantic.js';
export { type ServerTerms, ToolTermCache } from '../search/term-cache.js';
export type { ToolExplanation } from '../search/tool-index.js';
export {
  type SearchableTool,
  searchableTool,
  serverProfiles,
  type ToolHit,
  ToolSearchIndex,
} from '../search/tool-index.js';
