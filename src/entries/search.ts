/**
 * `tack/search`: tool search over a catalog (the ranked index, its baseline, hybrid semantic ranking), the
 * search_tools/call_tool meta-tool definitions, and the retrieval benchmark's metrics.
 */

export type { RetrievalRows } from '../search/bench.js';
export {
  compareRetrieval,
  contextCost,
  evaluate,
  loadCatalogFile,
  loadQueriesFile,
  loadToolsFile,
  type RetrievalMetrics,
  type RetrievalQuery,
} from '../search/bench.js';
export { configuredSemanticRanker } from '../search/embeddings.js';
export { CALL_TOOL_DEFINITION, groupByServer, SEARCH_TOOLS_DEFINITION } from '../search/meta-tools.js';
export { hybridSearch } from '../search/semantic.js';
export { type ServerTerms, ToolTermCache } from '../search/term-cache.js';
export type { ToolExplanation } from '../search/tool-index.js';
export {
  BaselineToolIndex,
  type SearchableTool,
  searchableTool,
  serverProfiles,
  type ToolHit,
  ToolSearchIndex,
} from '../search/tool-index.js';
