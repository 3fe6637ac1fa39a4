import type { ServerApi } from './declarations.js';
import type { ScriptCode } from './runtime.js';

/**
 * What run_code and code_api are, wherever they are offered (the harness's native tools, the gateway's served
 * ones): their names, inputs, the script a call carries, and code_api's answer. Each host adds only how a
 * script's calls reach its tools.
 */

export const RUN_CODE = 'run_code';
export const CODE_API = 'code_api';

/** code_api answers at most this many characters (the servers left out are named). */
export const CODE_API_CHARS = 40_000;

/** run_code's input: the script and its language (a new object each time: hosts may keep and extend it). */
export function runCodeInputSchema() {
  return {
    type: 'object' as const,
    properties: {
      code: { type: 'string', description: 'The body of an async function' },
      // The enum says it all; a description would ride on every request.
      language: { type: 'string', enum: ['javascript', 'typescript'] },
    },
    required: ['code'],
    additionalProperties: false,
  };
}

/** code_api's input: the servers whose declarations are wanted. */
export function codeApiInputSchema(serversDescription: string) {
  return {
    type: 'object' as const,
    properties: { servers: { type: 'array', items: { type: 'string' }, description: serversDescription } },
    required: ['servers'],
    additionalProperties: false,
  };
}

/**
 * The script a run_code call carries, or why there is none to run. TypeScript is not stripped here: that work
 * can grow with the text's nesting, so the engine's thread does it under the script's limits (runtime.ts).
 */
export function scriptSource(
  input: Record<string, unknown> | undefined,
): { code: ScriptCode } | { error: string } {
  const source = typeof input?.code === 'string' ? input.code : '';
  if (!source.trim()) return { error: `${RUN_CODE}: "code" must be a non-empty string` };
  if (input?.language === 'typescript') return { code: { typescript: source } };
  if (input?.language !== undefined && input.language !== 'javascript')
    return { error: `${RUN_CODE}: "language" must be "javascript" or "typescript"` };
  return { code: source };
}

/** code_api's answer: the declarations of the servers asked for, capped; unknown names listed with the real ones. */
export function answerCodeApi(
  apis: readonly ServerApi[],
  input: Record<string, unknown> | undefined,
): { text: string; isError: boolean } {
  const asked = Array.isArray(input?.servers)
    ? input.servers.filter((s): s is string => typeof s === 'string')
    : [];
  const known = apis.map((a) => a.identifier).join(', ') || 'none';
  if (asked.length === 0)
    return { text: `${CODE_API}: "servers" must list server names; there are: ${known}`, isError: true };
  const out: string[] = [];
  const unknown: string[] = [];
  const left: string[] = [];
  let size = 0;
  for (const name of asked) {
    const api = apis.find((a) => a.identifier === name || a.server === name);
    if (!api) unknown.push(name);
    else if (size + api.declarations.length > CODE_API_CHARS) left.push(name);
    else {
      out.push(api.declarations);
      size += api.declarations.length;
    }
  }
  if (unknown.length > 0)
    out.push(
      `// No server ${unknown.map((u) => `"${u}"`).join(', ')} (or its tools are held back); there are: ${known}`,
    );
  if (left.length > 0) out.push(`// Left out to keep this short; ask again for: ${left.join(', ')}`);
  return { text: out.join('\n'), isError: out.length === unknown.length + left.length && unknown.length > 0 };
}
