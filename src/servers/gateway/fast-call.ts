import { ProtocolError, ProtocolErrorCode, type Server } from '@modelcontextprotocol/server';
import { servedRequestContext } from '../../mcp/sdk-internals.js';
import { VERSION } from '../../version.js';
import type { FastPath, FastRequest } from '../serve.js';
import { paramHeaderDeclarations } from '../serving/mcp-param-headers.js';
import type { Downstream, GatewayCore } from './core.js';
import { CODE_API, RUN_CODE } from './handlers/code-mode.js';
import { callTool } from './handlers/tools-call.js';
import type { RequestContext } from './interaction.js';

/** A 2026-07-28 request says who it is in its own envelope; there is no connection to remember anything. */
const MODERN: Downstream = {
  server: undefined,
  era: 'modern',
  logLevel: undefined,
  clientCapabilities: () => undefined,
  clientInfo: () => undefined,
};

/**
 * The gateway's side of the HTTP fast path (serving/fast-path.ts): a plain `tools/call` of a served tool runs
 * through the same `callTool` as the SDK's handler (names, exchange, audit), with a request context built from
 * the parsed request instead of an SDK instance's. Everything it does not take is served by the SDK: tool search,
 * unknown or held names (their errors are the SDK's), tools with `Mcp-Param-*` header parameters (checked on
 * the SDK path), and a 2025-era session the gateway does not know.
 */
export function gatewayFastPath(
  core: GatewayCore,
  downstreamOf: (instance: Server) => Downstream | undefined,
): FastPath {
  return {
    serverInfo: { name: 'tack-gateway', version: VERSION },
    take(request) {
      // Only a catalog the guard has reviewed (serveHttp awaits the review before it offers a request here); a
      // catalog still under review, like a held or released tool, goes the SDK's way, whose handler waits for it.
      const view = core.current();
      if (!view || view.searching) return false;
      const { name, arguments: args } = request.message.params;
      // run_code and code_api are served by the SDK handler only (even when an upstream tool has the name).
      if (core.codeMode && (name === RUN_CODE || name === CODE_API)) return false;
      const entry = view.names.tools.get(name);
      if (!entry || paramHeaderDeclarations(entry.definition.inputSchema)) return false;
      const downstream = request.instance ? downstreamOf(request.instance) : MODERN;
      if (!downstream || downstream.era !== request.era) return false;
      callTool(core, downstream, fastContext(request), { name, arguments: args })
        .then(
          (result) => request.reply.result(result as Record<string, unknown>),
          (error: unknown) => request.reply.error(error),
        )
        // A reply that cannot be written (the client is gone) must not become an unhandled rejection.
        .catch(() => {});
      return true;
    },
  };
}

/** The request context a gateway call needs (interaction.ts), from the parsed request and its reply. */
function fastContext(request: FastRequest): RequestContext {
  const meta = request.message.params._meta;
  const instance = request.instance;
  const pushRefused = (method: string) => () =>
    Promise.reject(
      new ProtocolError(ProtocolErrorCode.InvalidRequest, `${method} is not sent on a 2026-07-28 request`),
    );
  return servedRequestContext({
    signal: request.reply.signal,
    _meta: meta,
    envelope: request.era === 'modern' ? meta : undefined,
    inputResponses: undefined,
    requestState: () => undefined,
    notify: (notification: { method: string; params?: Record<string, unknown> }) =>
      request.reply.notify(notification),
    // A 2025-era client is asked as the SDK's context asks it: through its session's instance, which checks
    // the capabilities the client declared.
    elicitInput: instance
      ? (params: never, options: never) => instance.elicitInput(params, options)
      : pushRefused('elicitation/create'),
    requestSampling: instance
      ? (params: never, options: never) => instance.createMessage(params, options)
      : pushRefused('sampling/createMessage'),
    send: instance
      ? (_request: never, options: never) => instance.listRoots(undefined, options)
      : pushRefused('roots/list'),
  });
}
