import type { ListResourceTemplatesResult } from '@modelcontextprotocol/client';
import type { GatewayCore } from '../core.js';

/** resources/templates/list: tack's own skill templates, then every upstream template under its served URI. */
export async function listResourceTemplates(core: GatewayCore): Promise<ListResourceTemplatesResult> {
  const view = await core.view();
  view.resourceTemplates ??= [
    ...(core.skills?.templates ?? []),
    ...view.catalog.servers.flatMap((s) =>
      s.resourceTemplates.map((template) => ({
        ...template,
        uriTemplate: view.names.uri(s.server, template.uriTemplate),
      })),
    ),
  ];
  return { resourceTemplates: view.resourceTemplates };
}
