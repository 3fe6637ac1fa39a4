import type { CallToolResult, Tool } from '@modelcontextprotocol/client';
import { type ApiTool, apiBinding, type ServerApi, serverApis } from '../../../codemode/declarations.js';
import { renderOutcome } from '../../../codemode/render.js';
import { DEFAULT_SCRIPT_LIMITS, type HostCallResult, runScript } from '../../../codemode/runtime.js';
import { Slots } from '../../../codemode/slots.js';
import {
  answerCodeApi,
  CODE_API,
  codeApiInputSchema,
  RUN_CODE,
  runCodeInputSchema,
  scriptSource,
} from '../../../codemode/tools.js';
import type { CatalogTool } from '../../../mcp/catalog.js';
import type { CatalogView, Downstream, GatewayCore } from '../core.js';
import type { RequestContext } from '../interaction.js';
import { callServedTool } from './tools-call.js';

/**
 * Code mode through `tack serve`: run_code runs a client's script in code mode's isolated runtime
 * (codemode/runtime.ts) and code_api answers the scripts' TypeScript declarations. Every tool call a script makes
 * is a served tool's call through `callServedTool`, the path of a client's own tools/call: held definitions are
 * refused with their reason, each call is written to the audit log under the client's name, and an upstream's
 * error comes back to the script as an error it can catch. The script's limits are the runtime's defaults
 * (DEFAULT_SCRIPT_LIMITS: 100 calls, 5 s of CPU, 64 MiB, 120 s, 20,000 characters of output).
 */

export { CODE_API, RUN_CODE };

/** A script's calls in flight at once, as the harness's run_code; the rest wait their turn. */
const CONCURRENCY = 4;

function apiTool(name: string, tool: CatalogTool): ApiTool {
  return {
    name,
    server: tool.server,
    toolName: tool.definition.name,
    description: tool.definition.description ?? '',
    inputSchema: tool.definition.inputSchema,
    ...(tool.definition.outputSchema !== undefined ? { outputSchema: tool.definition.outputSchema } : {}),
  };
}

/** The declarations of the served tools (held ones are not described: their new definition is not trusted). */
function servedApis(view: CatalogView): ServerApi[] {
  return serverApis([...view.names.tools].filter(([n]) => !isCodeTool(n)).map(([n, t]) => apiTool(n, t)));
}

function isCodeTool(name: string): boolean {
  return name === RUN_CODE || name === CODE_API;
}

/** run_code and code_api as listed for this catalog: run_code's description names the servers. */
export function codeModeTools(view: CatalogView): Tool[] {
  if (view.codeTools) return view.codeTools;
  const apis = servedApis(view);
  const l = DEFAULT_SCRIPT_LIMITS;
  const servers = apis.map((a) => `${a.identifier} (${Object.keys(a.tools).length} tools)`).join(', ');
  view.codeTools = [
    {
      name: RUN_CODE,
      description: `Run a script that calls this server's tools as \`await mcp.<server>.<tool>(args)\`; only what it prints with console.log and what it returns come back. The script is the body of an async JavaScript function (or TypeScript with "language": "typescript"): \`return\` the result. Get the declarations with ${CODE_API} first. Every call is checked and audited as a direct call; a tool error throws (catch it to go on). A tool with an output schema returns that object, any other its text. No file system, network, timers or imports. Limits: ${l.maxCalls} tool calls, ${l.cpuMs} ms of CPU, ${Math.round(l.memoryBytes / 1024 / 1024)} MiB, ${Math.round(l.wallMs / 1000)} s, ${l.maxOutputChars} characters of output. Servers: ${servers || 'none'}.`,
      inputSchema: runCodeInputSchema(),
    },
    {
      name: CODE_API,
      description: `The TypeScript declarations of servers' tools for ${RUN_CODE} scripts (mcp.<server>.<tool>).`,
      inputSchema: codeApiInputSchema(`Server names: ${servers || 'none'}`),
    },
  ];
  return view.codeTools;
}

function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] };
}

/** A tool result's text blocks, as a script sees a result without structured content. */
function textOf(result: CallToolResult): string {
  return (result.content ?? [])
    .map((block) => (block.type === 'text' ? block.text : `[${block.type}]`))
    .join('\n');
}

/**
 * The request context of one call a script makes: the client's request (who it is, its capabilities, where
 * progress and input requests go), with the script's signal, and never resuming a waiting call.
 */
function nestedContext(ctx: RequestContext, signal: AbortSignal): RequestContext {
  const m = ctx.mcpReq;
  // Without the progress token: several calls' own progress on one token would not increase monotonically, as
  // the protocol requires; run_code reports its calls done instead (scriptProgress).
  const { progressToken: _, ...meta } = m._meta ?? {};
  return {
    mcpReq: {
      signal,
      _meta: meta as RequestContext['mcpReq']['_meta'],
      envelope: m.envelope,
      inputResponses: undefined,
      requestState: (() => undefined) as RequestContext['mcpReq']['requestState'],
      notify: m.notify.bind(m),
      elicitInput: m.elicitInput.bind(m),
      requestSampling: m.requestSampling.bind(m),
      send: m.send.bind(m),
    },
  };
}

/** Progress of run_code, if its client asked for it: the script's calls done so far (never decreasing). */
function scriptProgress(ctx: RequestContext): (target: string) => void {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  let done = 0;
  return (target) => {
    done++;
    if (progressToken === undefined) return;
    ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: { progressToken, progress: done, message: `${target} done` },
      })
      .catch(() => {});
  };
}

/** run_code: runs the script; its calls go through `callServedTool`; a cancelled request stops the script. */
export async function runCode(
  core: GatewayCore,
  downstream: Downstream,
  ctx: RequestContext,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const script = scriptSource(args);
  if ('error' in script) return errorResult(script.error);
  const { code } = script;
  const view = await core.view();
  // Held tools are bound too (not declared), so a script calling one gets the reason it is held, as a client
  // calling it directly does, instead of "not a function".
  const all = [...view.names.tools, ...view.names.heldTools].filter(([n]) => !isCodeTool(n));
  const binding = apiBinding(serverApis(all.map(([n, t]) => apiTool(n, t))));
  const slots = new Slots(CONCURRENCY);
  const progress = scriptProgress(ctx);
  const outcome = await runScript(
    code,
    binding,
    async (target, input, signal): Promise<HostCallResult> => {
      await slots.take();
      try {
        if (signal.aborted) return { ok: false, error: 'interrupted' };
        const callArgs =
          typeof input === 'object' && input !== null && !Array.isArray(input)
            ? (input as Record<string, unknown>)
            : undefined;
        if (input !== undefined && !callArgs)
          return { ok: false, error: `${target}: the arguments must be an object` };
        const result = (await callServedTool(
          core,
          downstream,
          nestedContext(ctx, signal),
          target,
          callArgs,
        )) as CallToolResult & { resultType?: string; requestState?: string };
        if (result.resultType === 'input_required') {
          // A call the gateway keeps waiting for the answers (a 2025-era upstream asking) is cancelled now.
          core.exchanges.abandon(result.requestState, `${RUN_CODE}: a script cannot answer input requests`);
          return {
            ok: false,
            error: `${target} asks for input, which a script cannot give: call it directly`,
          };
        }
        if (result.isError) return { ok: false, error: textOf(result) };
        return { ok: true, value: result.structuredContent ?? textOf(result) };
      } catch (error) {
        // An upstream's own JSON-RPC error (or an unknown name): the script sees it and may catch it.
        return { ok: false, error: error instanceof Error ? error.message : String(error) };
      } finally {
        slots.give();
        progress(target);
      }
    },
    DEFAULT_SCRIPT_LIMITS,
    ctx.mcpReq.signal,
  );
  const rendered = renderOutcome(outcome, RUN_CODE);
  return { isError: rendered.isError, content: [{ type: 'text', text: rendered.text }] };
}

/** code_api: the declarations of the servers asked for, capped; unknown names are listed with the real ones. */
export async function codeApi(
  core: GatewayCore,
  args: Record<string, unknown> | undefined,
): Promise<CallToolResult> {
  const { text, isError } = answerCodeApi(servedApis(await core.view()), args);
  return { ...(isError ? { isError } : {}), content: [{ type: 'text', text }] };
}
