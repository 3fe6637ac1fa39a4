import * as z from 'zod';

/**
 * The caps that keep one hostile file, server or client from taking tack (or a shared gateway) down: each has a
 * default that no honest input reaches and a key under `limits` in tack.json. docs/security.md ("Limits") lists
 * them with the caps that are not configurable.
 */
export const LimitsSchema = z
  .object({
    jsonDepth: z
      .number()
      .int()
      .min(8)
      .max(1000)
      .optional()
      .describe(
        'Deepest nesting of arrays and objects accepted in tool arguments, tool results and gateway requests (default 64).',
      ),
    serverLogBytes: z
      .number()
      .int()
      .min(4096)
      .optional()
      .describe(
        "Size of a server's log file before it is rotated to <server>.log.1 (default 10 MiB). The newest lines are kept.",
      ),
    serverLogFiles: z
      .number()
      .int()
      .min(0)
      .max(20)
      .optional()
      .describe(
        'Rotated log files kept per server besides the current one (default 2); 0 keeps one file, cut to its newest half.',
      ),
    scanBytes: z
      .number()
      .int()
      .min(1024)
      .optional()
      .describe(
        'Characters of one definition text the poisoning scanner reads; the rest is reported as oversized (default 65,536).',
      ),
    docsFileBytes: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe('serve-docs: larger files are skipped with a warning (default 10 MiB).'),
    docsDepth: z
      .number()
      .int()
      .min(1)
      .max(256)
      .optional()
      .describe('serve-docs: folders deeper than this below the root are not read (default 32).'),
    docsFiles: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'serve-docs: documents indexed at most; the rest are skipped with a warning (default 20,000).',
      ),
    docsTotalBytes: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'serve-docs: total size of the documents indexed; indexing stops with a warning at the first that would pass it (default 256 MiB).',
      ),
  })
  .strict()
  .describe('Caps on input size and shape (see docs/security.md, "Limits").');

export type LimitsConfig = z.infer<typeof LimitsSchema>;
export type Limits = Required<LimitsConfig>;

const MIB = 1024 * 1024;

export const DEFAULT_LIMITS: Readonly<Limits> = Object.freeze({
  jsonDepth: 64,
  serverLogBytes: 10 * MIB,
  serverLogFiles: 2,
  scanBytes: 64 * 1024,
  docsFileBytes: 10 * MIB,
  docsDepth: 32,
  docsFiles: 20_000,
  docsTotalBytes: 256 * MIB,
});

/** The configured limits over the defaults. */
export function resolveLimits(configured: LimitsConfig = {}): Limits {
  const out: Limits = { ...DEFAULT_LIMITS };
  for (const key of Object.keys(out) as Array<keyof Limits>) {
    const value = configured[key];
    if (value !== undefined) out[key] = value;
  }
  return out;
}
