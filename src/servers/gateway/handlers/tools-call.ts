import type { CallToolResult } from '@modelcontextprotocol/client';
import { CLIENT_INFO_META_KEY, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { errorMessage, TackError } from '../../../errors.js';
import { CALL_TOOL_DEFINITION, callToolInput, SEARCH_TOOLS_DEFINITION } from '../../../search/meta-tools.js';
import { heldToolText } from '../../../security/held.js';
import type { AuditOutcome } from '../../../store/audit.js';
import { withRemoteParent } from '../../../telemetry/propagation.js';
import { digest } from '../../../util/canonical-json.js';
import type { CatalogView, Downstream, GatewayCore } from '../core.js';
import type { RequestContext } from '../interaction.js';
import { answeredWithError, upstreamFailure, wireError, withoutReservedMeta } from '../results.js';
import { tracedToolCall } from '../telemetry.js';
import { CODE_API, codeApi, RUN_CODE, runCode } from './code-mode.js';
import { resumes, runExchange } from './run-exchange.js';
import { searchTools } from './search-tools.js';

/** What a downstream tools/call names: the served tool and its arguments (the request itself is not changed). */
export interface ToolCallParams {
  name: string;
  arguments?: Record<string, unknown> | undefined;
}

/**
 * tools/call: the meta-tools while tool search is on, else the served tool, carried upstream as an exchange and
 * written to the audit log. `clientInfo` names the client in the audit log.
 */
export async function callTool(
  core: GatewayCore,
  downstream: Downstream,
  ctx: RequestContext,
  params: ToolCallParams,
): Promise<CallToolResult> {
  let { name, arguments: args } = params;
  // The reviewed catalog: a held tool is unknown here, whatever the host's catalog holds.
  const view = await core.view();
  if (view.searching) {
    if (name === SEARCH_TOOLS_DEFINITION.name) return searchTools(core, args, ctx.mcpReq.signal);
    if (name === CALL_TOOL_DEFINITION.name) {
      // call_tool names the tool to run: from here on it is that call, audited and routed as one.
      const input = callToolInput(args);
      if ('error' in input) return { isError: true, content: [{ type: 'text', text: input.error }] };
      ({ name, arguments: args } = input);
    }
  }
  if (core.codeMode && (name === RUN_CODE || name === CODE_API))
    return name === RUN_CODE ? runCode(core, downstream, ctx, args) : codeApi(core, args);
  return callServedTool(core, downstream, ctx, name, args);
}

/**
 * One served tool, by its served name: carried upstream as an exchange and written to the audit log. A client's
 * tools/call and each call of a run_code script come through here, so both are checked and audited alike.
 */
export async function callServedTool(
  core: GatewayCore,
  downstream: Downstream,
  ctx: RequestContext,
  name: string,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const view = await core.view();
  const names = view.names;
  const key = `tools/call ${name}`;
  const entry = names.tools.get(name);
  if (!entry && !resumes(core, ctx, downstream.era)) return unknownTool(core, view, name);
  const callArgs = args ?? {};
  const started = Date.now();
  // Awaited before the answer goes out (core.record says what that guarantees with each store).
  const audit = async (outcome: AuditOutcome, detail?: string) => {
    if (!entry) return;
    await core.record({
      at: new Date(started).toISOString(),
      client: core.clientLabel(downstream.era, clientInfo(downstream, ctx)),
      server: entry.server,
      tool: entry.definition.name,
      argsSha256: digest(callArgs),
      durationMs: Date.now() - started,
      outcome,
      detail,
    });
  };
  const denied = entry && core.deniedBy(entry.name, callArgs);
  if (denied) {
    await audit('denied', `permissions.deny rule ${denied}`);
    return {
      isError: true,
      content: [
        {
          type: 'text',
          text: `${name} is denied by the rule "${denied}" (permissions.deny in tack.json); tack serve does not run it.`,
        },
      ],
    };
  }
  const run = async () =>
    (await runExchange(
      core,
      downstream,
      ctx,
      key,
      entry && {
        server: entry.server,
        request: { method: 'tools/call', name: entry.definition.name, arguments: callArgs },
        key,
        finish: async (result) => {
          const done = withoutReservedMeta(result as CallToolResult);
          await audit(done.isError ? 'tool-error' : 'ok');
          return { ...done, content: names.content(entry.server, done.content ?? []) };
        },
        fail: async (error, cancelled) => {
          await audit(cancelled ? 'cancelled' : 'failed', errorMessage(error));
          if (answeredWithError(error)) throw wireError(error);
          return upstreamFailure(
            entry.server,
            errorMessage(error),
            TackError.isInstance(error) ? error.hint : undefined,
          );
        },
      },
    )) as CallToolResult;
  if (!entry) return run();
  // A client that traces sends its span's context in _meta: the gateway's span continues that trace.
  return withRemoteParent(ctx.mcpReq._meta, () =>
    tracedToolCall(
      {
        tool: name,
        server: entry.server,
        upstreamTool: entry.definition.name,
        era: downstream.era,
        transport: core.transport,
      },
      run,
      (result) => (result.isError ? 'tool-error' : 'ok'),
    ),
  );
}

/** Who is calling: a 2026-07-28 client says so per request; a 2025-era one said so in `initialize`. */
function clientInfo(
  downstream: Downstream,
  ctx: RequestContext,
): { name?: string; version?: string } | undefined {
  if (downstream.era === 'legacy') return downstream.clientInfo();
  const envelope = ctx.mcpReq.envelope as Record<string, unknown> | undefined;
  return envelope?.[CLIENT_INFO_META_KEY] as { name?: string; version?: string } | undefined;
}

/** A tool the catalog does not have: a held one or an upstream that is down is named; anything else is unknown. */
function unknownTool(core: GatewayCore, view: CatalogView, name: string): CallToolResult {
  const tool = view.names.heldTools.get(name);
  const held = tool && view.held.get(tool.server, 'tool', tool.definition.name);
  if (held) return { isError: true, content: [{ type: 'text', text: heldToolText(name, held, 'gateway') }] };
  const server = view.names.serverOf(name);
  const down = core.host.servers().find((s) => s.name === server && s.status !== 'connected');
  if (down)
    return upstreamFailure(down.name, down.error?.message ?? `server is ${down.status}`, down.error?.hint);
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Unknown tool: ${name}`);
}
