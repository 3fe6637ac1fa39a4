import type { ServerConfig } from '../config/load.js';
import { errorMessage, TackError } from '../errors.js';
import type { CatalogTool } from '../mcp/catalog.js';
import { resultText } from '../mcp/content.js';
import type { McpHost } from '../mcp/host.js';
import {
  applySandbox,
  type CapabilityLabel,
  labelTool,
  type SandboxedLabels,
  type SandboxFacts,
} from '../security/capabilities.js';
import type { NativeTool } from '../tools/native.js';
import type { GatedTool } from './approval.js';
import { sanitizeSchema } from './schema.js';

/** One tool as the loop offers it to the model: tack's own or an MCP server's, the same shape. */
export interface AgentTool extends GatedTool {
  /** The server's own name for an MCP tool (the model-visible name may be sanitized). */
  serverToolName?: string;
  inputSchema: Record<string, unknown>;
  /** An MCP tool's declared output schema (code mode types its result from it). */
  outputSchema?: unknown;
  /** How the schema was mended for providers (see schema.ts); empty when taken as it was. */
  schemaChanges: string[];
  /** Runs the call; `callId` is the model's id for it (a sub-agent names the call that started it). */
  run(
    input: Record<string, unknown>,
    signal: AbortSignal,
    callId?: string,
    step?: number,
  ): Promise<{ text: string; isError: boolean; structured?: unknown }>;
}

/** What the tool mapping needs from a server's configuration, and what its enforced sandbox guarantees. */
export type ToolServerSettings = Pick<ServerConfig, 'trusted' | 'capabilities'> & {
  sandboxFacts?: SandboxFacts;
};

/**
 * The servers' settings with the guarantees of each enforced sandbox (from the host: a sandbox that is only
 * configured, or preferred on a platform without one, guarantees nothing).
 */
export function withSandboxFacts(
  settings: ReadonlyMap<string, ToolServerSettings>,
  host: Pick<McpHost, 'servers'>,
): Map<string, ToolServerSettings> {
  const out = new Map(settings);
  for (const status of host.servers()) {
    if (status.sandbox.state !== 'enforced') continue;
    out.set(status.name, {
      trusted: false,
      ...settings.get(status.name),
      sandboxFacts: status.sandbox.guarantees,
    });
  }
  return out;
}

/**
 * The tools of every connected server (or of `entries`, a subset of the catalog), under their model-visible
 * names, calling through the host, with their capability labels (config, then trusted annotations, then guesses).
 */
export function mcpAgentTools(
  host: McpHost,
  settings: ReadonlyMap<string, ToolServerSettings>,
  entries: readonly CatalogTool[] = host.catalog.tools,
): AgentTool[] {
  const withFacts = withSandboxFacts(settings, host);
  return entries.map((entry) => {
    const { definition } = entry;
    const { schema, changes } = sanitizeSchema(definition.inputSchema);
    const trustedServer = withFacts.get(entry.server)?.trusted === true;
    const { labels, ruledOut } = mcpToolSecurity(entry, withFacts);
    return {
      name: entry.name,
      server: entry.server,
      serverToolName: definition.name,
      description: definition.description ?? definition.title ?? entry.name,
      readOnlyHint: definition.annotations?.readOnlyHint === true,
      trustedServer,
      native: false,
      capabilities: labels,
      ...(ruledOut.length > 0 ? { ruledOut } : {}),
      inputSchema: schema,
      ...(definition.outputSchema ? { outputSchema: definition.outputSchema } : {}),
      schemaChanges: changes,
      async run(input, signal) {
        const result = await host.callTool(entry.name, input, { signal });
        return {
          text: resultText(result),
          isError: result.isError === true,
          ...(result.structuredContent !== undefined ? { structured: result.structuredContent } : {}),
        };
      },
    };
  });
}

/**
 * An MCP tool's capability labels: its server's configured ones (by tool name, or `*`), else annotations a
 * trusted server gives, else guesses; then the legs its server's enforced sandbox rules out (source `sandbox`).
 */
export function mcpToolSecurity(
  entry: Pick<CatalogTool, 'server' | 'definition'>,
  settings: ReadonlyMap<string, ToolServerSettings>,
): SandboxedLabels {
  const server = settings.get(entry.server);
  const configured = server?.capabilities?.[entry.definition.name] ?? server?.capabilities?.['*'];
  const labels = labelTool(entry.definition, {
    trustedServer: server?.trusted === true,
    ...(configured ? { configured } : {}),
  });
  return applySandbox(labels, server?.sandboxFacts);
}

/** What each enforced sandbox guarantees, by its tack.json `sandbox` key, for the native tools run inside one. */
export interface NativeSandboxes {
  skillScripts?: SandboxFacts | undefined;
}

/**
 * tack's own tools (skills, knowledge, search, sub-agents), with the labels, the asking and the sandbox each
 * declares where it is defined (NativeToolTraits): a declared label is a `default` one, and the legs an enforced
 * sandbox rules out come off it as they do for an MCP server's tools.
 */
export function nativeAgentTools(tools: readonly NativeTool[], sandboxes: NativeSandboxes = {}): AgentTool[] {
  return tools.map((tool) => {
    const declared = (tool.capabilities ?? []).map(
      (label): CapabilityLabel => ({ capability: label.capability, source: 'default', why: label.why }),
    );
    const { labels, ruledOut } = applySandbox(declared, tool.sandbox ? sandboxes[tool.sandbox] : undefined);
    const alwaysAsk = tool.alwaysAsk === true;
    return {
      capabilities: labels,
      ...(ruledOut.length > 0 ? { ruledOut } : {}),
      name: tool.name,
      description: tool.description,
      readOnlyHint: !alwaysAsk,
      trustedServer: true,
      native: true,
      alwaysAsk,
      inputSchema: tool.inputSchema,
      schemaChanges: [],
      async run(input, signal, callId, step) {
        const result = await tool.execute(input, {
          signal,
          ...(callId !== undefined ? { callId } : {}),
          ...(step !== undefined ? { step } : {}),
        });
        return { text: result.text, isError: result.isError === true };
      },
    };
  });
}

/**
 * Runs a tool and words any failure so the model can recover: a protocol error, a timeout or a crashed server
 * is an error result naming the tool and what to do, not an exception that ends the run.
 */
export async function runTool(
  tool: AgentTool,
  input: Record<string, unknown>,
  signal: AbortSignal,
  callId?: string,
  step?: number,
): Promise<{ text: string; isError: boolean; structured?: unknown }> {
  try {
    return await tool.run(input, signal, callId, step);
  } catch (error) {
    if (signal.aborted) throw error;
    const hint = TackError.isInstance(error) && error.hint ? ` ${error.hint}` : '';
    const code = TackError.isInstance(error) ? error.code : undefined;
    const advice =
      code === 'REQUEST_TIMEOUT'
        ? 'The call timed out; try a smaller request, or another way.'
        : code === 'SERVER_UNAVAILABLE' || code === 'SERVER_CRASHED'
          ? 'The server is not available right now; do the task without this tool or tell the user.'
          : 'Check the arguments against the tool description and try again, or use another tool.';
    return {
      text: `The call to ${tool.name} failed: ${errorMessage(error)}.${hint} ${advice}`,
      isError: true,
    };
  }
}

/**
 * Tool output as data, not instructions: wrapped in a tag the system prompt explains, with the closing tag
 * escaped inside so the content cannot end the wrapper early and speak as the harness.
 */
export function wrapResult(tool: AgentTool, text: string, isError: boolean): string {
  const attrs = `name="${tool.name}"${tool.server ? ` server="${tool.server}"` : ''}${isError ? ' status="error"' : ''}`;
  return `<tool_result ${attrs}>\n${text.replace(/<\/tool_result/gi, '<\\/tool_result')}\n</tool_result>`;
}
