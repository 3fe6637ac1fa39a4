import { createHash } from 'node:crypto';

/**
 * Model-visible tool names. Every provider accepts `^[A-Za-z0-9_-]{1,64}$`, so every MCP tool is exposed as
 * `mcp__<server>__<tool>` inside that alphabet and length. Server names are validated in config (no `__`, no
 * trailing `_`), which makes the server part unambiguous; the tool part is handled here.
 *
 * A name that fits as it is stays as it is. A name that had to change (a character outside the alphabet, or
 * over 64 characters) always ends with a hash of the full original, `mcp__fs__read_file_1a2b3c4d` for
 * `read.file`: so it can never meet a real `read_file`, and a server adding such a tool later cannot take
 * over a name a model has already used. A name depends on its server and tool only, never on the rest of
 * the catalog or on connection order.
 */

export const MAX_TOOL_NAME_LENGTH = 64;
const INVALID = /[^A-Za-z0-9_-]/g;
const HASH_LENGTH = 8;

/** `mcp__<server>__<tool>` exactly as reported, before sanitizing. */
function rawToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** The model-visible name of one tool; `lossy` says whether it differs from the raw name. */
export function sanitizeToolName(server: string, tool: string): { name: string; lossy: boolean } {
  return visibleName(rawToolName(server, tool));
}

/**
 * Any name made to fit `[A-Za-z0-9_-]{1,64}` by the rule above: unchanged when it fits, else sanitized and
 * ended with a hash of the original. assignToolNames applies it whatever the prefix (the gateway passes its own).
 */
function visibleName(raw: string): { name: string; lossy: boolean } {
  const cleaned = raw.replace(INVALID, '_');
  if (cleaned === raw && raw.length <= MAX_TOOL_NAME_LENGTH) return { name: raw, lossy: false };
  const hash = createHash('sha256').update(raw).digest('hex').slice(0, HASH_LENGTH);
  return { name: `${cleaned.slice(0, MAX_TOOL_NAME_LENGTH - HASH_LENGTH - 1)}_${hash}`, lossy: true };
}

/** The configured server a model-visible name belongs to (the part between `mcp__` and the next `__`). */
export function serverOfToolName(name: string): string | undefined {
  return /^mcp__(.+?)__./.exec(name)?.[1];
}

export interface NamedTool {
  server: string;
  tool: string;
}

/**
 * Names for a whole catalog, `mcp__<server>__<tool>` unless `prefix` says otherwise. The first entry of a
 * name keeps it: a server that lists one tool twice gets it once, as the SDK does (and with a prefix that
 * does not name the server, two servers' tools of the same name: the first in configuration order wins).
 */
export function assignToolNames<T extends NamedTool>(
  tools: readonly T[],
  prefix: (server: string) => string = (server) => `mcp__${server}__`,
): Map<string, T> {
  const result = new Map<string, T>();
  for (const entry of tools) {
    const { name } = visibleName(`${prefix(entry.server)}${entry.tool}`);
    if (!result.has(name)) result.set(name, entry);
  }
  return result;
}
