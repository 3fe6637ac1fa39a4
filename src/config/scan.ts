import * as z from 'zod';

/** `scan` in tack.json: the poisoning scan's optional LLM judge (security/judge.ts). */
export const ScanSchema = z
  .object({
    judge: z
      .object({
        model: z
          .string()
          .regex(/^(anthropic|openai|openai-compatible):.+/)
          .describe(
            'The judge model: anthropic:<id>, openai:<id> or openai-compatible:<id> (keys and base URLs from ANTHROPIC_API_KEY, OPENAI_API_KEY, *_BASE_URL as for agent.model).',
          ),
        timeoutMs: z
          .number()
          .int()
          .positive()
          .max(300_000)
          .optional()
          .describe(
            'How long one judgement may take (default 60000); a definition not judged keeps its static verdict.',
          ),
        maxDefinitions: z
          .number()
          .int()
          .positive()
          .max(10_000)
          .optional()
          .describe(
            'Definitions judged in one run at most (default 200); the rest keep their static verdict.',
          ),
      })
      .strict()
      .optional()
      .describe(
        'Off unless set: definitions the static score leaves in doubt (the grey band) go to this model with a fixed rubric when `tack scan --judge` runs; its verdicts are cached by definition digest in the store and used by later scans and sessions.',
      ),
  })
  .strict()
  .describe('The poisoning scan (docs/security.md).');

export type ScanConfig = z.infer<typeof ScanSchema>;
