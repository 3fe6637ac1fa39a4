import { type ApiTool, apiBinding, type ServerApi, serverApis } from '../codemode/declarations.js';
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
import type { NativeTool } from '../tools/native.js';
import type { ContextPart } from './context.js';
import type { RunToolCall } from './pipeline.js';
import type { AgentTool } from './toolset.js';

export { CODE_API, RUN_CODE };

/** `off`: never; `on`: always (when MCP tools exist); `auto`: when the catalog is large or deferred. */
export type CodeModeSetting = 'off' | 'auto' | 'on';

export interface CodeModeOptions {
  mode?: CodeModeSetting;
  /** The script's limits (runtime.ts DEFAULT_SCRIPT_LIMITS for the rest). */
  limits?: Partial<ScriptLimits>;
  /** `auto` offers code mode from this many MCP tools on (default 10), or whenever they are deferred. */
  minTools?: number;
  /** The declarations go in the system prompt up to this many characters (default 12,000); past it, code_api. */
  inlineChars?: number;
  /** A script's calls in flight at once (default 4, as a step's direct calls); the rest wait their turn. */
  concurrency?: number;
}

const DEFAULT_MIN_TOOLS = 10;
const DEFAULT_CONCURRENCY = 4;

const DEFAULT_INLINE_CHARS = 12_000;
/** code_api answers at most this many characters (the rest of the servers asked for are named). */

/** Whether code mode is offered this step. */
export function offersCodeMode(
  options: CodeModeOptions | undefined,
  mcpTools: number,
  deferring: boolean,
): boolean {
  const mode = options?.mode ?? 'off';
  if (mode === 'off' || mcpTools === 0) return false;
  return mode === 'on' || deferring || mcpTools >= (options?.minTools ?? DEFAULT_MIN_TOOLS);
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
 * The system part that teaches code mode: how to write a script, its limits, and the API: the declarations
 * themselves when they fit (and the tools are not deferred), else the servers and how to get theirs.
 */
export function codeModePart(
  options: CodeModeOptions | undefined,
  apis: readonly ServerApi[],
  deferring: boolean,
): ContextPart {
  const l = limitsOf(options);
  const intro = `You can run a script with ${RUN_CODE} instead of calling tools one by one. The script is the body of an async JavaScript function (or TypeScript with "language": "typescript"); it calls MCP tools as \`await mcp.<server>.<tool>(args)\`. Only what it prints with console.log and what it returns reach you: intermediate results stay out of your context. Use it for work of several calls whose results you would only filter, join or count (list, then read many items; search, then fetch the matches); call a tool directly when you need to see its whole result. Every call is checked as a direct call is (rules, approvals, a tool error throws: catch it to go on). A tool with an output type returns that object; any other returns its text (JSON.parse it when it is JSON). There is no file system, network, timer or import in the script. Limits: ${l.maxCalls} tool calls, ${l.cpuMs} ms of CPU, ${Math.round(l.memoryBytes / 1024 / 1024)} MiB, ${Math.round(l.wallMs / 1000)} s, ${l.maxOutputChars} characters of output.`;
  const all = apis.map((a) => a.declarations).join('\n');
  const inline = !deferring && all.length <= (options?.inlineChars ?? DEFAULT_INLINE_CHARS);
  const api = inline
    ? `The API:\n${all}`
    : `Servers in the API: ${apis.map((a) => `${a.identifier} (${Object.keys(a.tools).length} tools)`).join(', ')}. Get the declarations of the ones you need with ${CODE_API} before writing a script.`;
  return { name: 'code mode', text: `<code_mode>\n${intro}\n${api}\n</code_mode>` };
}

/** run_code and code_api, over the session's tools and pipeline. */
export function codeModeTools(deps: CodeModeDeps): NativeTool[] {
  const runCode: NativeTool = {
    name: RUN_CODE,
    description:
      'Run a script that calls MCP tools as `await mcp.<server>.<tool>(args)`; only its console output and return value come back. The script is the body of an async function: `return` the result.',
    inputSchema: runCodeInputSchema(),
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
    name: CODE_API,
    description: `The TypeScript declarations of servers' tools for ${RUN_CODE} scripts (mcp.<server>.<tool>).`,
    inputSchema: codeApiInputSchema('Server names, as in the API list'),
    capabilities: [],
    execute: async (input) => answerCodeApi(serverApis(apiTools(deps.tools())), input),
  };
  return [runCode, codeApi];
}

/** What the model gets of a script: its console output, then its return value or why it stopped. */
export function render(outcome: ScriptOutcome): { text: string; isError: boolean } {
  return renderOutcome(outcome, RUN_CODE);
}
