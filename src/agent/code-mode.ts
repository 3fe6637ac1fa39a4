import {
  type ApiTool,
  apiBinding,
  compactApi,
  type ServerApi,
  serverApis,
} from '../codemode/declarations.js';
import { renderOutcome } from '../codemode/render.js';
import {
  DEFAULT_SCRIPT_LIMITS,
  type HostCallResult,
  runScript,
  type ScriptLimits,
  type ScriptOutcome,
} from '../codemode/runtime.js';
import { Slots } from '../codemode/slots.js';
import {
  answerCodeApi,
  CODE_API,
  codeApiInputSchema,
  RUN_CODE,
  runCodeInputSchema,
  scriptSource,
} from '../codemode/tools.js';
import { estimateTextTokens } from '../tokens/count.js';
import type { NativeTool } from '../tools/native.js';
import type { ContextPart } from './context.js';
import type { RunToolCall } from './pipeline.js';
import type { AgentTool } from './toolset.js';

export { CODE_API, RUN_CODE };

/**
 * `off`: never; `on`: always (when MCP tools exist); `auto`: when the tools are deferred, or when what code mode
 * adds to every request is small next to the MCP tools' own definitions (see offersCodeMode).
 */
export type CodeModeSetting = 'off' | 'auto' | 'on';

export interface CodeModeOptions {
  mode?: CodeModeSetting;
  /** The script's limits (runtime.ts DEFAULT_SCRIPT_LIMITS for the rest). */
  limits?: Partial<ScriptLimits>;
  /** `auto` offers code mode from this many MCP tools on (default 2: a script pays from two calls). */
  minTools?: number;
  /**
   * `auto` offers code mode while its system part and its two tools' definitions stay within this many tokens
   * (tack's token estimate, tokens/count.ts; default 400). Measured (docs/benchmarks.md#code-mode): 336 tokens for
   * server-filesystem and server-memory (23 tools), at which the 13-call task halves its billed input and one
   * call costs no more than a direct one.
   */
  maxFixedTokens?: number;
  /** The result listing goes in the system prompt up to this many characters (default 12,000); past it, code_api. */
  inlineChars?: number;
  /** A script's calls in flight at once (default 4, as a step's direct calls); the rest wait their turn. */
  concurrency?: number;
}

const DEFAULT_MIN_TOOLS = 2;
const DEFAULT_MAX_FIXED_TOKENS = 400;
const DEFAULT_CONCURRENCY = 4;

const DEFAULT_INLINE_CHARS = 12_000;

const RUN_CODE_DESCRIPTION = 'Run a script calling MCP tools (see code_mode).';
const CODE_API_DESCRIPTION = `Full TypeScript declarations of servers' tools for ${RUN_CODE}.`;

/** run_code's and code_api's definitions as the model gets them. */
function definitions() {
  return [
    { name: RUN_CODE, description: RUN_CODE_DESCRIPTION, inputSchema: runCodeInputSchema() },
    { name: CODE_API, description: CODE_API_DESCRIPTION, inputSchema: codeApiInputSchema('Server names') },
  ];
}

const definitionsText = (tools: ReadonlyArray<{ name: string; description: string; inputSchema: unknown }>) =>
  tools.map((t) => JSON.stringify([t.name, t.description, t.inputSchema])).join('\n');

/**
 * Whether code mode is offered this step. `auto`: when the MCP tools are deferred (the part then names the
 * servers only), or from `minTools` tools while the part and run_code/code_api stay within `maxFixedTokens`:
 * that fixed cost rides on every request, used or not, and the cap bounds it on a session that never runs a
 * script. It grows with the servers and the tools whose result type differs from their server's usual one.
 */
export function offersCodeMode(
  options: CodeModeOptions | undefined,
  mcp: readonly AgentTool[],
  deferring: boolean,
): boolean {
  const mode = options?.mode ?? 'off';
  if (mode === 'off' || mcp.length === 0) return false;
  if (mode === 'on' || deferring) return true;
  if (mcp.length < (options?.minTools ?? DEFAULT_MIN_TOOLS)) return false;
  const fixed =
    estimateTextTokens(codeModePart(options, serverApis(apiTools(mcp)), false).text) +
    estimateTextTokens(definitionsText(definitions()));
  return fixed <= (options?.maxFixedTokens ?? DEFAULT_MAX_FIXED_TOKENS);
}

/** The session's MCP tools as the API generator takes them. */
export function apiTools(tools: readonly AgentTool[]): ApiTool[] {
  return tools
    .filter((t) => !t.native && t.server)
    .map((t) => ({
      name: t.name,
      server: t.server!,
      toolName: t.serverToolName ?? t.name,
      description: t.description,
      inputSchema: t.inputSchema,
      ...(t.outputSchema !== undefined ? { outputSchema: t.outputSchema } : {}),
    }));
}

export interface CodeModeDeps {
  /** Every MCP tool the session may use now (held ones and filtered ones are not among them). */
  tools: () => AgentTool[];
  /** The session's tool pipeline: every call of a script goes through it, as a direct call does. */
  run: RunToolCall;
  options: CodeModeOptions | undefined;
}

function limitsOf(options: CodeModeOptions | undefined): ScriptLimits {
  return { ...DEFAULT_SCRIPT_LIMITS, ...options?.limits };
}

/**
 * The system part that teaches code mode: how a script calls tools, its limits, and a compact API. The tools are
 * also offered directly, so their arguments are already in this request's tool definitions: the part names each
 * tool's identifier and result type only, and code_api answers the full declarations. When the tools are deferred
 * (or the listing is past `inlineChars`), it names the servers instead. Nothing in it changes from step to step
 * while the catalog does not: it is part of the prefix a provider caches.
 */
export function codeModePart(
  options: CodeModeOptions | undefined,
  apis: readonly ServerApi[],
  deferring: boolean,
): ContextPart {
  const l = limitsOf(options);
  // Memory and wall time are left to the error a script gets when it reaches them: every token here rides on
  // every request.
  const intro = `${RUN_CODE} runs the body of an async JavaScript function that calls MCP tool mcp__<server>__<tool> as \`await mcp.<server>.<tool>(args)\`; only console.log output and the return value reach you: use it for several calls whose results you would filter or count. Calls are checked as direct ones; a tool error throws. No I/O but the tools; at most ${l.maxCalls} calls, ${l.cpuMs / 1000} s CPU, ${l.maxOutputChars} output characters.`;
  const listing = compactApi(apis);
  const inline = !deferring && listing.length <= (options?.inlineChars ?? DEFAULT_INLINE_CHARS);
  const api = inline
    ? `Results (text unless typed here; JSON.parse JSON text; full types: ${CODE_API}):\n${listing}`
    : `Servers: ${apis.map((a) => `${a.identifier} (${Object.keys(a.tools).length} tools)`).join(', ')}. Get the declarations of the ones you need with ${CODE_API} first.`;
  return { name: 'code mode', text: `<code_mode>\n${intro}\n${api}\n</code_mode>` };
}

/** run_code and code_api, over the session's tools and pipeline. */
export function codeModeTools(deps: CodeModeDeps): NativeTool[] {
  const [runDefinition, apiDefinition] = definitions();
  const runCode: NativeTool = {
    ...runDefinition!,
    // Its own labels: none. Each call the script makes is judged by the gate as a direct call, and its taint is
    // the session's.
    capabilities: [],
    execute: async (input, context) => {
      const script = scriptSource(input);
      if ('error' in script) return { text: script.error, isError: true };
      const { code } = script;
      const callId = context?.callId ?? RUN_CODE;
      const step = context?.step ?? 0;
      const apis = serverApis(apiTools(deps.tools()));
      let n = 0;
      const slots = new Slots(deps.options?.concurrency ?? DEFAULT_CONCURRENCY);
      const outcome = await runScript(
        code,
        apiBinding(apis),
        async (target, args, signal): Promise<HostCallResult> => {
          // Numbered in the order the script asked, whatever order they run in.
          const id = `${callId}.${++n}`;
          await slots.take();
          try {
            if (signal.aborted) return { ok: false, error: 'interrupted' };
            const result = await deps.run(
              { callId: id, name: target, input: args, parentCallId: callId },
              { signal, step },
            );
            if (result.isError) return { ok: false, error: result.text };
            return { ok: true, value: result.structured !== undefined ? result.structured : result.text };
          } finally {
            slots.give();
          }
        },
        limitsOf(deps.options),
        context?.signal,
      );
      return render(outcome);
    },
  };
  const codeApi: NativeTool = {
    ...apiDefinition!,
    capabilities: [],
    execute: async (input) => answerCodeApi(serverApis(apiTools(deps.tools())), input),
  };
  return [runCode, codeApi];
}

/** What the model gets of a script: its console output, then its return value or why it stopped. */
export function render(outcome: ScriptOutcome): { text: string; isError: boolean } {
  return renderOutcome(outcome, RUN_CODE);
}
