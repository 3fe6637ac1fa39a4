import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import { assignToolNames } from './names.js';

/** A tool as the model sees it: one unique name, and the server definition it routes to. */
export interface CatalogTool {
  /** `mcp__<server>__<tool>`, sanitized and unique in the catalog. */
  name: string;
  server: string;
  /** The server's own definition; `definition.name` is the name to send back to that server. */
  definition: Tool;
}

export interface ServerListings {
  server: string;
  tools: readonly Tool[];
  resources: readonly Resource[];
  resourceTemplates: readonly ResourceTemplate[];
  prompts: readonly Prompt[];
}

/**
 * The host's view of everything its servers offer. Tools are flattened under model-visible names; resources,
 * templates and prompts stay per server, since their identifiers (URIs, prompt names) are the server's own.
 */
export class Catalog {
  readonly tools: readonly CatalogTool[];
  readonly servers: readonly ServerListings[];
  readonly #byName: ReadonlyMap<string, CatalogTool>;

  constructor(listings: readonly ServerListings[]) {
    this.servers = listings;
    const entries = listings.flatMap((s) =>
      s.tools.map((definition) => ({ server: s.server, tool: definition.name, definition })),
    );
    const named = assignToolNames(entries);
    this.tools = [...named].map(([name, entry]) => ({
      name,
      server: entry.server,
      definition: entry.definition,
    }));
    this.#byName = new Map(this.tools.map((tool) => [tool.name, tool]));
  }

  /** Routing goes through this lookup only, never through a name a server reports about itself. */
  getTool(name: string): CatalogTool | undefined {
    return this.#byName.get(name);
  }

  /** What one server lists: tools, resources, templates and prompts. */
  listingsOf(server: string): ServerListings | undefined {
    return this.servers.find((s) => s.server === server);
  }
}
