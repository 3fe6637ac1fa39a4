import type { ContentBlock } from '@modelcontextprotocol/client';

/**
 * The gateway's namespaces. Tools keep the host's model-visible names (`mcp__<server>__<tool>`); prompts get
 * the same shape; resources get a URI prefix naming their server: `tack://<server>/<original URI>`. Server
 * names cannot contain `/`, so the prefix always parses back, and two servers offering the same URI (or the
 * same template) stay apart.
 */
const PREFIX = 'tack://';

export function gatewayUri(server: string, uri: string): string {
  return `${PREFIX}${server}/${uri}`;
}

export function parseGatewayUri(uri: string): { server: string; uri: string } | undefined {
  if (!uri.startsWith(PREFIX)) return undefined;
  const slash = uri.indexOf('/', PREFIX.length);
  if (slash <= PREFIX.length) return undefined;
  return { server: uri.slice(PREFIX.length, slash), uri: uri.slice(slash + 1) };
}

/**
 * Resource links and embedded resources in a result point at the upstream server's URIs; rewritten into the
 * gateway's namespace, the downstream client can read them back through the gateway.
 */
export function namespaceContent(server: string, blocks: readonly ContentBlock[]): ContentBlock[] {
  return blocks.map((block) => {
    if (block.type === 'resource_link') return { ...block, uri: gatewayUri(server, block.uri) };
    if (block.type === 'resource') {
      return { ...block, resource: { ...block.resource, uri: gatewayUri(server, block.resource.uri) } };
    }
    return block;
  });
}
