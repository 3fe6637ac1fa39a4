import { ResourceNotFoundError } from '@modelcontextprotocol/server';
import type { GatewayCore } from '../core.js';
import type { GatewayNames } from '../names.js';

/**
 * The upstream server and URI a downstream resource URI names: the server its prefix names, or else the one
 * server that offers the URI. Throws when there is none (ResourceNotFoundError, or the host's TackError).
 */
export function resolveResource(
  core: GatewayCore,
  names: GatewayNames,
  uri: string,
): { server: string; uri: string } {
  const target = names.parseUri(uri);
  const server = target.server ?? core.host.serverForUri(target.uri);
  if (!core.host.has(server)) {
    const servers = core.host.servers().map((s) => s.name);
    throw new ResourceNotFoundError(
      uri,
      `Resource ${uri} not found: tack gateway has no server "${server}" (servers: ${servers.join(', ') || 'none'})`,
    );
  }
  return { server, uri: target.uri };
}

/** The upstream server and URI a downstream resource URI names, if any server offers it. */
export function resourceTarget(
  core: GatewayCore,
  names: GatewayNames,
  uri: string,
): { server: string; uri: string } | undefined {
  try {
    return resolveResource(core, names, uri);
  } catch {
    return undefined;
  }
}

/** The upstream server and template a (gateway) resource template URI names. */
export function templateTarget(
  core: GatewayCore,
  names: GatewayNames,
  uri: string,
): { server: string; ref: { type: 'ref/resource'; uri: string } } | undefined {
  const target = names.parseUri(uri);
  const server =
    target.server ??
    core.host.catalog.servers.find((s) => s.resourceTemplates.some((t) => t.uriTemplate === target.uri))
      ?.server;
  return server ? { server, ref: { type: 'ref/resource', uri: target.uri } } : undefined;
}
