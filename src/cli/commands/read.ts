import { guardDefinition } from '../guard.js';
import { print, printJson } from '../output.js';
import { type ServerOptions, withHost } from '../with-host.js';

export async function readCommand(
  uri: string,
  options: ServerOptions & { allowChanged?: boolean },
): Promise<number> {
  return withHost(options, options.server ? [options.server] : undefined, async (host, signal, config) => {
    // A URI no resource or template lists has no definition to check (a server may serve unlisted URIs).
    const listing = host.resourceListingFor(uri, options.server);
    if (listing)
      await guardDefinition(
        host,
        config,
        {
          server: listing.server,
          kind: listing.template ? 'resource-template' : 'resource',
          name: listing.key,
        },
        options.allowChanged === true,
      );
    const result = await host.readResource(uri, {
      signal,
      ...(options.server ? { server: options.server } : {}),
    });
    if (options.json) {
      printJson(result);
      return 0;
    }
    for (const content of result.contents) {
      if ('text' in content) print(content.text);
      else
        print(
          `[${content.uri}: ${content.mimeType ?? 'binary'}, ${Buffer.byteLength(content.blob, 'base64')} bytes]`,
        );
    }
    return 0;
  });
}
