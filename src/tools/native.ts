/**
 * A tool tack itself provides to the model (skills today; knowledge and sub-agents later), next to the tools of
 * MCP servers. Same shape as an MCP tool definition so the harness lists both the same way.
 */
export interface NativeTool {
  name: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, unknown>;
    required?: string[];
    additionalProperties?: boolean;
  };
  /** Runs the tool. A failure the model can act on comes back as `isError`, not as a throw. */
  execute(input: Record<string, unknown>, context?: { signal?: AbortSignal }): Promise<NativeToolResult>;
}

export interface NativeToolResult {
  text: string;
  isError?: boolean;
}

/** Arguments the model got wrong: told back to it, unlike a bug in the tool, which throws. */
export class ToolInputError extends TypeError {
  override name = 'ToolInputError';
}

/** Reads a required string argument, or says which one is missing in words the model can fix. */
export function stringArg(tool: string, input: Record<string, unknown>, key: string): string {
  const value = input[key];
  if (typeof value !== 'string' || value === '') {
    throw new ToolInputError(`${tool}: "${key}" must be a non-empty string`);
  }
  return value;
}
