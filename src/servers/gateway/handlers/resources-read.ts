import type { ReadResourceResult } from '@modelcontextprotocol/client';
import type { Downstream, GatewayCore } from '../core.js';
import type { RequestContext } from '../interaction.js';
import { wireError, withoutReservedMeta } from '../results.js';
import { resolveResource } from './resource-target.js';
import { resumes, runExchange } from './run-exchange.js';

/** resources/read: tack's own skill:// URIs, else the upstream resource the URI names, as an exchange. */
export async function readResource(
  core: GatewayCore,
  downstream: Downstream,
  ctx: RequestContext,
  uri: string,
): Promise<ReadResourceResult> {
  // skill:// is tack's own (its skills); in flat mode it wins over an upstream's skill:// URIs.
  if (core.skills?.owns(uri)) {
    return core.skills.read(uri).catch((error: unknown) => {
      throw wireError(error, uri);
    });
  }
  const names = (await core.view()).names;
  const key = `resources/read ${uri}`;
  let target: { server: string; uri: string } | undefined;
  try {
    target = resolveResource(core, names, uri);
  } catch (error) {
    if (!resumes(core, ctx, downstream.era)) throw wireError(error, uri);
  }
  return (await runExchange(
    core,
    downstream,
    ctx,
    key,
    target && {
      server: target.server,
      request: { method: 'resources/read', uri: target.uri },
      key,
      finish: (result) => {
        const done = withoutReservedMeta(result as ReadResourceResult);
        return {
          ...done,
          contents: done.contents.map((c) => ({ ...c, uri: names.uri(target.server, c.uri) })),
        };
      },
      fail: (error) => {
        throw wireError(error, uri);
      },
    },
  )) as ReadResourceResult;
}
