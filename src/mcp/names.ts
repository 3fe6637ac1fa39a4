import { createHash } from 'node:crypto';

/**
 * Model-visible tool names. Every provider accepts `^[A-Za-z0-9_-]{1,64}$`, so every MCP tool is exposed as
 * `mcp__<server>__<tool>` inside that alphabet and length. Server names are validated in config (no `__`, no
 * trailing `_`), which makes the server part unambiguous; the tool part is sanitized here.
 *
 * Determinism: a name depends only on the server name, the tool name and the other tools of the catalog, never
 * on connection order. A tool whose name needed no change always keeps it.
 */

export const MAX_TOOL_NAME_LENGTH = 64;
const INVALID = /[^A-Za-z0-9_-]/g;
const HASH_LENGTH = 8;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, HASH_LENGTH);
}

/** `mcp__<server>__<tool>` exactly as reported, before sanitizing. */
export function rawToolName(server: string, tool: string): string {
  return `mcp__${server}__${tool}`;
}

/** Sanitize and cap one name on its own; `lossy` says whether two different tools could have met here. */
export function sanitizeToolName(server: string, tool: string): { name: string; lossy: boolean } {
  const raw = rawToolName(server, tool);
  const cleaned = raw.replace(INVALID, '_');
  if (cleaned.length <= MAX_TOOL_NAME_LENGTH) return { name: cleaned, lossy: cleaned !== raw };
  return { name: withHash(raw, cleaned), lossy: true };
}

/** Cut to fit and end with a hash of the full raw name, so two long names that share a prefix stay apart. */
function withHash(raw: string, cleaned: string): string {
  const keep = MAX_TOOL_NAME_LENGTH - HASH_LENGTH - 1;
  return `${cleaned.slice(0, keep)}_${shortHash(raw)}`;
}

export interface NamedTool {
  server: string;
  tool: string;
}

/**
 * Names for a whole catalog. Where sanitizing made two tools meet (`get.weather` and `get_weather`, or two
 * Chinese names that both became underscores), the lossy ones get a hash of their raw name; an exact name is
 * never changed to make room.
 */
export function assignToolNames<T extends NamedTool>(tools: readonly T[]): Map<string, T> {
  const first = tools.map((entry) => ({ entry, ...sanitizeToolName(entry.server, entry.tool) }));
  const counts = new Map<string, number>();
  for (const { name } of first) counts.set(name, (counts.get(name) ?? 0) + 1);

  const result = new Map<string, T>();
  for (const { entry, name, lossy } of first) {
    const clash = (counts.get(name) ?? 0) > 1;
    const raw = rawToolName(entry.server, entry.tool);
    const finalName = clash && lossy ? withHash(raw, raw.replace(INVALID, '_')) : name;
    if (result.has(finalName)) {
      // Two exact duplicates: one server listed the same tool name twice. Keep the first, as the SDK does.
      continue;
    }
    result.set(finalName, entry);
  }
  return result;
}
