import { TackError } from '../errors.js';

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

/**
 * One tool: an object schema without extra properties, and `run` given a reader of its required string
 * arguments. Errors the model caused (an unknown name, a bad path or argument, a refused run: TackError and
 * ToolInputError) go back to it as text it can act on; anything else is a bug and throws.
 */
export function nativeTool(
  name: string,
  description: string,
  properties: Record<string, unknown>,
  required: string[],
  run: (
    arg: (key: string) => string,
    input: Record<string, unknown>,
    signal: AbortSignal | undefined,
  ) => Promise<string | NativeToolResult>,
): NativeTool {
  return {
    name,
    description,
    inputSchema: { type: 'object', properties, required, additionalProperties: false },
    async execute(input, context) {
      try {
        const result = await run((key) => stringArg(name, input, key), input, context?.signal);
        return typeof result === 'string' ? { text: result } : result;
      } catch (error) {
        if (TackError.isInstance(error)) {
          return { text: `${error.message}${error.hint ? `\n${error.hint}` : ''}`, isError: true };
        }
        if (error instanceof ToolInputError) return { text: error.message, isError: true };
        throw error;
      }
    },
  };
}
