import { execFile } from 'node:child_process';
import { join } from 'node:path';
import type { Usage } from '../src/agent/events.js';
import { costOf, priceOf } from '../src/agent/prices.js';
import {
  CACHE_SESSION_STEPS,
  cacheSessionCommand,
  cacheSessionTurn,
  jsonEvents,
} from '../test/helpers/cache-session.js';
import { providerEnv, startFakeProvider } from '../test/helpers/fake-provider.js';
import { isMain, log, repoRoot, round, tempDir } from './util.js';

/**
 * Prompt caching on a ten-step session over the example servers (test/helpers/cache-session.ts), run by the real
 * `tack run` against the local model server speaking Anthropic's and OpenAI's wire formats. The server simulates
 * each provider's cache from the request bodies (test/helpers/fake-cache.ts: Anthropic caches at the breakpoints
 * a request marks, OpenAI any prefix of 1,024 tokens or more) and reports usage as the provider does; tack reads
 * it back and prices it. "Without breakpoints" is the same session against a server whose cache serves nothing,
 * which is what Anthropic does for a request that marks none. Token counts are the server's (characters / 4).
 */

const MODELS = { anthropic: 'anthropic:claude-sonnet-4-5', openai: 'openai:gpt-4.1' } as const;

interface Variant {
  name: string;
  model: string;
  promptCache: boolean;
}

const VARIANTS: Variant[] = [
  { name: 'anthropic, breakpoints', model: MODELS.anthropic, promptCache: true },
  { name: 'anthropic, no breakpoints', model: MODELS.anthropic, promptCache: false },
  { name: 'openai, automatic cache', model: MODELS.openai, promptCache: true },
];

async function runVariant(variant: Variant) {
  const provider = await startFakeProvider((request) => cacheSessionTurn(request), {
    promptCache: variant.promptCache,
  });
  const tmp = tempDir('prompt-cache');
  try {
    const { args, cwd } = cacheSessionCommand(repoRoot, variant.model);
    const env = { ...process.env, TACK_HOME: join(tmp.dir, 'home'), ...providerEnv(provider) };
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        [join(repoRoot, 'bin', 'tack.js'), ...args],
        { cwd, env },
        (error, out, err) =>
          error ? reject(new Error(`${variant.name}: tack run failed: ${err}`)) : resolve(out),
      ),
    );
    const events = jsonEvents(stdout);
    const steps = events.filter((e) => e.type === 'usage').map((e) => e.stepUsage as Usage);
    if (steps.length !== CACHE_SESSION_STEPS)
      throw new Error(`${variant.name}: ${steps.length} steps, expected ${CACHE_SESSION_STEPS}`);
    const hashes = new Set(events.flatMap((e) => (e.type === 'step-start' ? [e.prefixHash] : [])));
    const later = steps.slice(1);
    const sum = (list: Usage[], f: (u: Usage) => number) => list.reduce((s, u) => s + f(u), 0);
    const total = events.at(-1)?.total as Usage;
    // The provider's list prices applied to what the provider reported, apart from what tack computed.
    const price = priceOf(variant.model.split(':')[1]!)!;
    const reported = provider.requests.map((r) => r.usage!);
    const billed = reported.reduce((s, w) => {
      const anthropic = variant.model.startsWith('anthropic:');
      const all = anthropic ? w.input + w.cacheRead + w.cacheWrite : w.input;
      return (
        s +
        costOf(
          {
            inputTokens: all,
            outputTokens: w.output,
            cachedInputTokens: w.cacheRead,
            cacheWriteTokens: w.cacheWrite,
          },
          price,
        )
      );
    }, 0);
    return {
      variant: variant.name,
      model: variant.model,
      steps: steps.length,
      distinctPrefixHashes: hashes.size,
      inputTokens: total.inputTokens,
      cacheReadTokens: total.cachedInputTokens,
      cacheWriteTokens: total.cacheWriteTokens ?? 0,
      outputTokens: total.outputTokens,
      cachedShareSteps2to10Pct: round(
        (100 * sum(later, (u) => u.cachedInputTokens)) /
          Math.max(
            1,
            sum(later, (u) => u.inputTokens),
          ),
        1,
      ),
      costUsd: Number(total.costUsd.toFixed(6)),
      costAtProviderPricesUsd: Number(billed.toFixed(6)),
      perStep: steps.map((u, i) => ({
        step: i + 1,
        input: u.inputTokens,
        cacheRead: u.cachedInputTokens,
        cacheWrite: u.cacheWriteTokens ?? 0,
        costUsd: Number(u.costUsd.toFixed(6)),
      })),
    };
  } finally {
    await provider.close();
    tmp.remove();
  }
}

export async function runPromptCache() {
  const variants = [];
  for (const variant of VARIANTS) {
    log(`prompt-cache: ${variant.name}`);
    variants.push(await runVariant(variant));
  }
  const [cached, uncached] = variants;
  return {
    session: `${CACHE_SESSION_STEPS} steps over the example servers (9 tool calls, then an answer)`,
    tokens: 'the local model server’s count: characters / 4',
    variants,
    anthropicSavingPct: round(100 * (1 - cached!.costUsd / uncached!.costUsd), 1),
    targets: { cachedShareSteps2to10Pct: 80 },
  };
}

if (isMain(import.meta.url)) {
  const result = await runPromptCache();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
