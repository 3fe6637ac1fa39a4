/**
 * `${VAR}` and `${VAR:-default}` expansion, as Claude Code does it in `.mcp.json`. Hand-written because the
 * grammar is one regular expression and every library for it also expands things we must not (`$VAR`, command
 * substitution). As in a POSIX shell, `:-` takes the default when the variable is unset or empty.
 */

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;

export interface ExpandResult {
  value: string;
  /** Variables referenced without a default that are not set. */
  missing: string[];
}

export function expandVars(input: string, env: Readonly<Record<string, string | undefined>>): ExpandResult {
  const missing: string[] = [];
  const value = input.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const current = env[name];
    if (current !== undefined && current !== '') return current;
    if (fallback !== undefined) return fallback;
    missing.push(name);
    return '';
  });
  return { value, missing };
}
