import * as z from 'zod';

/**
 * `toolSearch` in tack.json: how the harness's search_tools and `tack serve`'s (serve.toolSearch) rank tools.
 * Whether tools are deferred at all stays with `agent.toolSearch` and `serve.toolSearch`.
 */
export const ToolSearchSchema = z
  .object({
    embeddings: z
      .object({
        model: z
          .string()
          .regex(/^(openai|openai-compatible):.+$/)
          .describe(
            'The embedding model: openai:<id> (e.g. openai:text-embedding-3-small) or openai-compatible:<id> (a local Ollama, llama.cpp or LM Studio server; needs baseURL).',
          ),
        baseURL: z
          .string()
          .min(1)
          .optional()
          .describe(
            'The endpoint with its /v1, e.g. http://127.0.0.1:11434/v1 for Ollama; `${VAR}` expands.',
          ),
        apiKey: z
          .string()
          .optional()
          .describe('The key, e.g. "${OPENAI_API_KEY}" (the default for openai:); `${VAR}` expands.'),
        dimensions: z.number().int().positive().optional().describe('Vector size, for models that take one.'),
        timeoutMs: z
          .number()
          .int()
          .positive()
          .max(120_000)
          .optional()
          .describe(
            'How long one embeddings request may take before the search goes on lexically (default 10000).',
          ),
        weight: z
          .number()
          .min(0)
          .max(10)
          .optional()
          .describe(
            "The semantic ranking's weight in the fusion, against the lexical ranking's 1 (default 1).",
          ),
      })
      .strict()
      .optional()
      .describe(
        'Semantic ranking fused with the lexical one. Vectors are cached in the store by definition; the search is lexical while the endpoint is down.',
      ),
  })
  .strict()
  .describe('How search_tools ranks tools (in tack run/chat and in tack serve with serve.toolSearch).');

export type ToolSearchConfig = z.infer<typeof ToolSearchSchema>;
