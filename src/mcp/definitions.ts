import type {
  Prompt,
  Resource,
  ResourceTemplateType as ResourceTemplate,
  Tool,
} from '@modelcontextprotocol/client';
import type { Catalog } from './catalog.js';
import type { McpHost } from './host.js';
import type { ResolvedPackage } from './package-resolve.js';

/**
 * `<name> <transport>:<command line or URL>`: what pins are kept under. The same server name pointed at a
 * different program is a different server, whose definitions were never approved.
 */
export function serverIdentity(server: {
  name: string;
  transport: string;
  command?: string;
  args?: readonly string[];
  url?: string;
}): string {
  const target =
    server.transport === 'stdio'
      ? [server.command ?? '', ...(server.args ?? [])].join(' ')
      : (server.url ?? '');
  return `${server.name} ${server.transport}:${target}`;
}

/** One connected server's definitions, under its identity: what the definition guard reviews. */
export interface HostServerDefinitions {
  server: string;
  identity: string;
  tools: readonly Tool[];
  instructions: string | undefined;
  prompts: readonly Prompt[];
  /**
   * Resources and templates under their URI (template), when asked for: only `tack read` checks them. A template
   * is marked: a server may list one URI as both, and the two are two definitions.
   */
  resources?: ReadonlyArray<{
    uri: string;
    template?: boolean;
    name: string;
    title?: string | undefined;
    description?: string | undefined;
    mimeType?: string | undefined;
  }>;
  /** What its package runner ran at the last start (`npx -y pkg`): pinned, so a new release is held. */
  package?: ResolvedPackage | undefined;
}

/**
 * What each server of `catalog` offers right now, for the definition guard (security/pins.ts); with `resources`,
 * its resources and resource templates too.
 */
export function hostDefinitions(
  host: McpHost,
  catalog: Catalog = host.catalog,
  options: { resources?: boolean } = {},
): HostServerDefinitions[] {
  return catalog.servers.map((listing) => {
    const connection = host.connection(listing.server);
    return {
      server: listing.server,
      identity: serverIdentity(connection.config),
      tools: listing.tools,
      instructions: connection.instructions,
      prompts: listing.prompts,
      ...(connection.package ? { package: connection.package } : {}),
      ...(options.resources ? { resources: resourcesOf(listing.resources, listing.resourceTemplates) } : {}),
    };
  });
}

function resourcesOf(
  resources: readonly Resource[],
  templates: readonly ResourceTemplate[],
): NonNullable<HostServerDefinitions['resources']> {
  const shape = (r: Resource | ResourceTemplate, uri: string, template: boolean) => ({
    uri,
    ...(template ? { template } : {}),
    name: r.name,
    ...(r.title ? { title: r.title } : {}),
    ...(r.description ? { description: r.description } : {}),
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
  });
  return [
    ...resources.map((r) => shape(r, r.uri, false)),
    ...templates.map((t) => shape(t, t.uriTemplate, true)),
  ];
}
