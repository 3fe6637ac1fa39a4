/**
 * `${VAR}` and `${VAR:-default}` expansion, as Claude Code does it in `.mcp.json`. Hand-written because the
 * grammar is one regular expression and every library for it also expands things we must not (`$VAR`, command
 * substitution). As in a POSIX shell, `${VAR}` of a variable set to "" is "", and `:-` takes the default when
 * the variable is unset or empty. Defaults do not nest.
 */

const PATTERN = /\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g;
/** Anything that looks like a reference but is not one of the two forms (`${TOKEN:default}`, `${1X}`). */
const MALFORMED = /\$\{(?![A-Za-z_][A-Za-z0-9_]*(?::-[^}]*)?\})[^}]*\}/g;

export interface ExpandResult {
  value: string;
  /** Variables referenced without a default that are not set. */
  missing: string[];
  /** References that are neither `${VAR}` nor `${VAR:-default}`; left as written. */
  malformed: string[];
}

export function expandVars(input: string, env: Readonly<Record<string, string | undefined>>): ExpandResult {
  const missing: string[] = [];
  const malformed = [...input.matchAll(MALFORMED)].map((m) => m[0]);
  const value = input.replace(PATTERN, (_match, name: string, fallback: string | undefined) => {
    const current = env[name];
    if (fallback !== undefined) return current === undefined || current === '' ? fallback : current;
    if (current !== undefined) return current;
    missing.push(name);
    return '';
  });
  return { value, missing, malformed };
}
