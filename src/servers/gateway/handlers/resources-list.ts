import type { ListResourcesResult } from '@modelcontextprotocol/client';
import type { GatewayCore } from '../core.js';

/** resources/list: every upstream resource under its served URI (built once per catalog). */
export async function listResources(core: GatewayCore): Promise<ListResourcesResult> {
  const view = await core.view();
  view.resources ??= view.catalog.servers.flatMap((s) =>
    s.resources.map((resource) => ({ ...resource, uri: view.names.uri(s.server, resource.uri) })),
  );
  return { resources: view.resources };
}
