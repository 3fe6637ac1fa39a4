import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpHost } from '../src/mcp/host.js';
import { fixtures, isMain, log, median, repoRoot, round, sdkClient, stdioServer, summarize } from './util.js';

/**
 * Large tool results over stdio: tack (which frames stdout with its linear read buffer) against the bare SDK
 * client (whose buffer re-concatenates and rescans per chunk) on the same fixture tool, `big`, for results of
 * 1, 5 and 10 MB. Median of `repetitions` calls per size and side, the sides alternating.
 */
export async function runLargeResult(options: { sizesMB?: number[]; repetitions?: number } = {}) {
  const sizes = options.sizesMB ?? [1, 5, 10];
  const repetitions = options.repetitions ?? 5;
  const host = await McpHost.start({
    config: { servers: [stdioServer('big', fixtures.dual)] },
    eraCache: false,
    logDir: false,
  });
  const bare = await sdkClient(
    new StdioClientTransport({
      command: process.execPath,
      args: [fixtures.dual],
      cwd: repoRoot,
      stderr: 'ignore',
      maxBufferSize: 64 * 1024 * 1024,
    }),
    'bench-bare',
  );
  const sides = {
    tack: (megabytes: number) => host.callTool('mcp__big__big', { megabytes }),
    bareSdk: (megabytes: number) =>
      bare.callTool({ name: 'big', arguments: { megabytes } }, { timeout: 120_000 }),
  };
  const results: Array<Record<string, unknown>> = [];
  try {
    for (const mb of sizes) {
      const samples: Record<keyof typeof sides, number[]> = { tack: [], bareSdk: [] };
      for (let i = 0; i < repetitions; i++) {
        const order = i % 2 === 0 ? (['tack', 'bareSdk'] as const) : (['bareSdk', 'tack'] as const);
        for (const side of order) {
          const started = performance.now();
          await sides[side](mb);
          samples[side].push(performance.now() - started);
        }
      }
      const row = {
        megabytes: mb,
        tack: summarize(samples.tack),
        bareSdk: summarize(samples.bareSdk),
        speedup: round(median(samples.bareSdk) / median(samples.tack), 2),
      };
      log(`large result ${mb} MB: tack ${row.tack.medianMs} ms, bare SDK ${row.bareSdk.medianMs} ms`);
      results.push(row);
    }
  } finally {
    await host.close();
    await bare.close();
  }
  return { repetitions, results };
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runLargeResult(), null, 2)}\n`);
}
