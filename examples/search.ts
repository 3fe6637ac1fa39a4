/**
 * tack/search: rank a catalog's tools for a query, as search_tools does when the agent defers definitions. Run it
 * after `npm run build`, from the repository's root, with: node dist/examples/search.js
 */

import {
  CALL_TOOL_DEFINITION,
  configuredSemanticRanker,
  hybridSearch,
  SEARCH_TOOLS_DEFINITION,
  type SearchableTool,
  searchableTool,
  type ToolHit,
  ToolSearchIndex,
} from '../src/entries/search.js';
import { loadConfig, McpHost } from '../src/index.js';

const config = loadConfig({ configFile: 'examples/tack.json' });
await using host = await McpHost.start({ config });

// Any definitions will do: here, the connected servers' tools under their model-visible names.
const tools: SearchableTool[] = host.catalog.tools.map((tool) =>
  searchableTool(tool.name, tool.server, tool.definition),
);
const index = ToolSearchIndex.build(tools);
const hits: ToolHit[] = index.search('save this to my notes', 3);
for (const hit of hits) console.log(`${hit.tool.name} ${hit.score.toFixed(2)}`);

// Several queries, one per capability a task needs, fused; semantic ranking joins when tack.json configures
// `toolSearch.embeddings` (none here: lexical only).
const semantic = configuredSemanticRanker(config.toolSearch.embeddings, undefined, undefined);
const hybrid = await hybridSearch(index, tools, ['weather forecast', 'write a note'], 5, semantic);
console.log(
  hybrid.semantic,
  hybrid.hits.map((hit) => hit.tool.name),
);

// The two meta-tools a model gets instead of every definition.
console.log(SEARCH_TOOLS_DEFINITION.name, CALL_TOOL_DEFINITION.name);
