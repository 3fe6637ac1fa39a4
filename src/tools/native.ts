import { TackError } from '../errors.js';

/**
 * What a tool can do, in the words of the lethal-trifecta guard (security/capabilities.ts, which this layer may
 * not import: the agent checks the two lists are the same).
 */
export type ToolCapability = 'untrusted-input' | 'private-data' | 'egress' | 'destructive';

/** A capability a native tool declares about itself, and why (shown in the approval prompt). */
export interface ToolCapabilityLabel {
  capability: ToolCapability;
  why: string;
}

/** What a native tool says about itself to the approval gate, next to its definition. */
export interface NativeToolTraits {
  /**
   * Its capability labels (source `default`); none for a tool that only reads tack's own state. They feed the
   * trifecta flag and guard as an MCP tool's do.
   */
  capabilities?: readonly ToolCapabilityLabel[];
  /** Asks before every call, whatever the mode and the rules say (a skill script runs code). */
  alwaysAsk?: boolean;
  /** Runs in this sandbox (tack.json `sandbox.<name>`): the legs it rules out when enforced come off its labels. */
  sandbox?: 'skillScripts';
}

/**
 * A tool tack itself provides to the model (skills, knowledge, search, sub-agents), next to the tools of MCP
 * servers. Same shape as an MCP tool definition so the harness lists both the same way, with its labels.
 */
export interface NativeTool extends NativeToolTraits {
  name: string;
  description: string;
  inputSchema: {
    type: 'object';
    properties: Record<string, unknown>;
    required?: string[];
    additionalProperties?: boolean;
  };
  /** Runs the tool. A failure the model can act on comes back as `isError`, not as a throw. */
  execute(input: Record<string, unknown>, context?: NativeToolContext): Promise<NativeToolResult>;
}

/** The call a native tool runs for: its id, its step and the signal that cancels it. */
export interface NativeToolContext {
  signal?: AbortSignal;
  /** The model's id for this call (a sub-agent names the call that started it). */
  callId?: string;
  /** The step the call belongs to (a tool that runs other tools names it in their events). */
  step?: number;
}

/** What a native tool returns to the model: text, and whether it is an error. */
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
 * One tool: an object schema without extra properties, `run` given a reader of its required string arguments,
 * and what it declares about itself (`traits`: labels, asking, sandbox). Errors the model caused (an unknown
 * name, a bad path or argument, a refused run: TackError and ToolInputError) go back to it as text it can act
 * on; anything else is a bug and throws.
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
  traits: NativeToolTraits = {},
): NativeTool {
  return {
    ...traits,
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
