import { printListing, table, truncate } from '../output.js';
import { type ServerOptions, withHost } from '../with-host.js';

/** `tack resources`: every server's resources and resource templates, the URIs `tack read` takes. */
export async function resourcesCommand(options: ServerOptions): Promise<number> {
  return withHost(options, options.server ? [options.server] : undefined, async (host) => {
    const rows = host.catalog.servers.flatMap((s) => [
      ...s.resources.map((r) => ({ server: s.server, kind: 'resource', uri: r.uri, ...about(r) })),
      ...s.resourceTemplates.map((t) => ({
        server: s.server,
        kind: 'template',
        uri: t.uriTemplate,
        ...about(t),
      })),
    ]);
    return printListing(options, rows, 'No resources.', () =>
      table(
        ['SERVER', 'KIND', 'URI', 'MIME', 'DESCRIPTION'],
        rows.map((r) => [r.server, r.kind, r.uri, r.mimeType ?? '-', truncate(r.description ?? r.name, 60)]),
      ),
    );
  });
}

function about(r: { name: string; mimeType?: string | undefined; description?: string | undefined }) {
  return { name: r.name, mimeType: r.mimeType, description: r.description };
}

/** `tack prompts`: every server's prompts and their arguments, what `tack prompt` takes. */
export async function promptsCommand(options: ServerOptions): Promise<number> {
  return withHost(options, options.server ? [options.server] : undefined, async (host) => {
    const rows = host.catalog.servers.flatMap((s) =>
      s.prompts.map((p) => ({
        server: s.server,
        name: p.name,
        arguments: (p.arguments ?? []).map((a) => ({ name: a.name, required: a.required === true })),
        description: p.description,
      })),
    );
    return printListing(options, rows, 'No prompts.', () =>
      table(
        ['SERVER', 'PROMPT', 'ARGUMENTS', 'DESCRIPTION'],
        rows.map((p) => [
          p.server,
          p.name,
          p.arguments.map((a) => (a.required ? a.name : `[${a.name}]`)).join(' ') || '-',
          truncate(p.description ?? '', 60),
        ]),
      ),
    );
  });
}
