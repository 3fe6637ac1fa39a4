import type { Prompt, Tool } from '@modelcontextprotocol/client';
import type { Catalog } from './catalog.js';
import type { McpHost } from './host.js';

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
}

/** What each server of `catalog` offers right now, for the definition guard (security/pins.ts). */
export function hostDefinitions(host: McpHost, catalog: Catalog = host.catalog): HostServerDefinitions[] {
  return catalog.servers.map((listing) => {
    const connection = host.connection(listing.server);
    return {
      server: listing.server,
      identity: serverIdentity(connection.config),
      tools: listing.tools,
      instructions: connection.instructions,
      prompts: listing.prompts,
    };
  });
}
