import type { ContentBlock, Prompt } from '@modelcontextprotocol/client';
import type { Catalog, CatalogTool } from '../../mcp/catalog.js';
import { assignToolNames } from '../../mcp/names.js';

/**
 * The names the gateway gives what it serves. Namespaced (the default), a tool or prompt is
 * `<server>__<name>` (the downstream host adds its own `mcp__<gateway>__`, so `mcp__` would only repeat) and a
 * resource URI is `tack://<server>/<original URI>`: server names cannot contain `/`, so the prefix always
 * parses back, and two servers offering the same name or URI stay apart. Without a namespace
 * (`serve.namespace: false`, for a gateway in front of one server that should look like that server) names
 * and URIs are the upstream's own; on a clash between two servers the first in configuration order wins,
 * and the others are listed in `clashes`.
 */
const URI_PREFIX = 'tack://';

export class GatewayNames {
  readonly #namespaced: boolean;
  readonly tools: ReadonlyMap<string, CatalogTool>;
  /** Tools left out as held, under the names they would be served by. */
  readonly heldTools: ReadonlyMap<string, CatalogTool>;
  readonly prompts: ReadonlyMap<string, { server: string; prompt: Prompt }>;
  /** Upstream names hidden by a clash when not namespaced: `server: name`. */
  readonly clashes: readonly string[];

  /**
   * `held`: tools and prompts the definition guard holds back. They are named with the rest, then left out, so a
   * held tool's name is never handed to another server's tool of the same name (a client that allowed one
   * server's `send_email` must not reach another's).
   */
  constructor(
    catalog: Catalog,
    namespaced: boolean,
    held: (kind: 'tool' | 'prompt', server: string, name: string) => boolean = () => false,
  ) {
    this.#namespaced = namespaced;
    const prefix = namespaced ? (server: string) => `${server}__` : () => '';
    const toolEntries = catalog.tools.map((tool) => ({
      server: tool.server,
      tool: tool.definition.name,
      entry: tool,
    }));
    const tools = assignToolNames(toolEntries, prefix);
    const served = new Map<string, CatalogTool>();
    const heldTools = new Map<string, CatalogTool>();
    for (const [name, t] of tools) (held('tool', t.server, t.tool) ? heldTools : served).set(name, t.entry);
    this.tools = served;
    this.heldTools = heldTools;
    const promptEntries = catalog.servers.flatMap((s) =>
      s.prompts.map((prompt) => ({ server: s.server, tool: prompt.name, prompt })),
    );
    const prompts = assignToolNames(promptEntries, prefix);
    this.prompts = new Map(
      [...prompts]
        .filter(([, p]) => !held('prompt', p.server, p.tool))
        .map(([name, p]) => [name, { server: p.server, prompt: p.prompt }]),
    );
    const kept = new Set([...tools.values(), ...prompts.values()]);
    this.clashes = [...toolEntries, ...promptEntries]
      .filter((e) => !kept.has(e))
      .map((e) => `${e.server}: ${e.tool}`);
  }

  uri(server: string, uri: string): string {
    return this.#namespaced ? `${URI_PREFIX}${server}/${uri}` : uri;
  }

  /** The server and upstream URI a downstream URI names; no server when not namespaced (or not prefixed). */
  parseUri(uri: string): { server?: string; uri: string } {
    if (!this.#namespaced || !uri.startsWith(URI_PREFIX)) return { uri };
    const slash = uri.indexOf('/', URI_PREFIX.length);
    if (slash <= URI_PREFIX.length) return { uri };
    return { server: uri.slice(URI_PREFIX.length, slash), uri: uri.slice(slash + 1) };
  }

  /** The server a namespaced tool name belongs to, for naming it when it is down. */
  serverOf(name: string): string | undefined {
    return this.#namespaced ? /^(.+?)__./.exec(name)?.[1] : undefined;
  }

  /**
   * Resource links and embedded resources in a result point at the upstream server's URIs; in the gateway's
   * namespace the downstream client can read them back through the gateway.
   */
  content(server: string, blocks: readonly ContentBlock[]): ContentBlock[] {
    if (!this.#namespaced) return [...blocks];
    return blocks.map((block) => {
      if (block.type === 'resource_link') return { ...block, uri: this.uri(server, block.uri) };
      if (block.type === 'resource') {
        return { ...block, resource: { ...block.resource, uri: this.uri(server, block.resource.uri) } };
      }
      return block;
    });
  }
}
