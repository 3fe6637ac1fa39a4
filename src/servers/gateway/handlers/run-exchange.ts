import type { ClientCapabilities } from '@modelcontextprotocol/client';
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
} from '@modelcontextprotocol/server';
import type { CallRound } from '../../../mcp/connection.js';
import type { Downstream, GatewayCore } from '../core.js';
import type { Exchange } from '../exchange.js';
import { GatewayCall, type RequestContext } from '../interaction.js';

/** The request state a 2026-07-28 retry carries (opaque to the gateway unless it names a waiting call). */
export function requestState(ctx: RequestContext, era: 'modern' | 'legacy'): unknown {
  return era === 'modern' ? ctx.mcpReq.requestState<unknown>() : undefined;
}

/** Whether this request resumes a call kept waiting in the gateway (its name need not be served any more). */
export function resumes(core: GatewayCore, ctx: RequestContext, era: 'modern' | 'legacy'): boolean {
  return core.exchanges.isPending(requestState(ctx, era));
}

/**
 * Runs one downstream request as an exchange, or resumes the call its request state names. `exchange` is
 * undefined only for a resumption (the name may no longer be in the catalog; the waiting call knows its own).
 */
export async function runExchange(
  core: GatewayCore,
  downstream: Downstream,
  ctx: RequestContext,
  key: string,
  exchange: Exchange | undefined,
) {
  const state = requestState(ctx, downstream.era);
  if (core.exchanges.isPending(state)) return core.exchanges.resume(state, key, ctx);
  if (!exchange) throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Nothing to serve for ${key}`);
  const call = new GatewayCall(downstream.era, ctx, core.answerTimeoutMs);
  // A 2025-era client's calls share its roots (and take turns with other clients' on an upstream that asks).
  if (downstream.era === 'legacy') call.owner = downstream;
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  call.logLevel =
    downstream.era === 'modern'
      ? envelope?.[LOG_LEVEL_META_KEY]?.toString()
      : (downstream.logLevel ?? 'debug');
  // What the client said of itself goes upstream with the request: the level it wants logs at (a 2026-07-28
  // server logs only when a request asks) and its capabilities, so an upstream asks only for input this client
  // can give, or refuses the way it would refuse the client itself.
  const capabilities: ClientCapabilities | undefined =
    downstream.era === 'modern'
      ? (envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined)
      : (downstream.clientCapabilities() as ClientCapabilities | undefined);
  call.capabilities = capabilities;
  const meta = {
    ...(call.logLevel ? { [LOG_LEVEL_META_KEY]: call.logLevel } : {}),
    ...(capabilities ? { [CLIENT_CAPABILITIES_META_KEY]: capabilities } : {}),
  };
  // A 2026-07-28 client retrying after an upstream's input_required brings that upstream's answers along.
  const first: CallRound = {
    inputResponses: downstream.era === 'modern' ? ctx.mcpReq.inputResponses : undefined,
    requestState: typeof state === 'string' ? state : undefined,
    meta: Object.keys(meta).length ? meta : undefined,
  };
  return core.exchanges.run(exchange, call, first);
}
