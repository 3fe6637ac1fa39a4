import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { scanCatalog } from '../src/security/catalog.js';
import { DEFAULT_SCAN_BYTES, scanTool } from '../src/security/scan.js';
import { freePort, startService } from '../test/helpers/processes.js';
import { ADVERSARIAL_INPUTS, ADVERSARIAL_SCHEMAS, hostileCatalog } from './fixtures/scan-inputs.js';
import { isMain, log, median, repoRoot, round, tempDir } from './util.js';

/**
 * The poisoning scanner on hostile definitions. One definition whose description is 1 MiB of a worst case of each
 * pattern family (bench/fixtures/scan-inputs.ts), scanned as the harness and `tack serve` scan it (the default
 * `limits.scanBytes`: the first 64 KiB read, the rest reported): median of 7 after a warm-up, against the target of
 * 50 ms per definition. Then the same megabyte read whole (`scanBytes` 1 MiB, median of 3): the patterns
 * themselves are linear, not only bounded. Then input schemas past every bound of the walk. Last, `tack serve
 * --http` (a process, a fresh state directory each time, so every definition is seen and scanned first) in front
 * of one server whose tool is honest, 200,000 newlines or 1 MiB of `.ssh `: time to its ready line, median of 5.
 * Apart: whole catalogs built to make every catalog-wide check do the most (bench/fixtures/scan-inputs.ts
 * `hostileCatalog`: one word list, one look-alike name, 64 servers named in every text) at 250, 1,000 and 4,000
 * tools, scanned as `tack scan` scans them (scanCatalog), median of 3: the time per tool stays flat when the scan is
 * linear in the catalog.
 */
const MB = 1024 * 1024;
const RUNS = 7;
const TARGET_MS = 50;
const BIN = join(repoRoot, 'bin/tack.js');
const POISONED = join(repoRoot, 'dist/bench/fixtures/poisoned-server.js');

function samples(runs: number, fn: () => unknown): number[] {
  fn();
  const out: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    fn();
    out.push(performance.now() - started);
  }
  return out;
}

interface DefinitionResult {
  family: string;
  input: string;
  chars: number;
  medianMs: number;
  maxMs: number;
  wholeMedianMs: number;
  withinTarget: boolean;
}

function definitions(): DefinitionResult[] {
  return ADVERSARIAL_INPUTS.map((input) => {
    const description = input.build(MB);
    const tool = { server: 'evil', name: 'tool', description };
    const bounded = samples(RUNS, () => scanTool(tool));
    const whole = samples(3, () => scanTool(tool, { scanBytes: MB }));
    return {
      family: input.family,
      input: input.name,
      chars: description.length,
      medianMs: round(median(bounded), 2),
      maxMs: round(Math.max(...bounded), 2),
      wholeMedianMs: round(median(whole), 1),
      withinTarget: median(bounded) < TARGET_MS,
    };
  });
}

function schemas(): Array<{ schema: string; medianMs: number; withinTarget: boolean }> {
  return ADVERSARIAL_SCHEMAS.map((schema) => {
    const tool = {
      server: 'evil',
      name: 'tool',
      description: 'Adds numbers.',
      inputSchema: schema.build(MB),
    };
    const times = samples(RUNS, () => scanTool(tool));
    return {
      schema: schema.name,
      medianMs: round(median(times), 2),
      withinTarget: median(times) < TARGET_MS,
    };
  });
}

const CATALOG_SIZES = [250, 1000, 4000];

function catalogs(): Array<{ tools: number; servers: number; medianMs: number; msPerTool: number }> {
  return CATALOG_SIZES.map((n) => {
    const catalog = hostileCatalog(n);
    const times = samples(3, () => scanCatalog(catalog));
    return {
      tools: n,
      servers: new Set(catalog.map((t) => t.server)).size,
      medianMs: round(median(times), 1),
      msPerTool: round(median(times) / n, 3),
    };
  });
}

/** `tack serve --http` in front of the poisoned server, from spawn to its ready line. */
async function serveStart(input: string, chars: number): Promise<{ ms: number; held: boolean }> {
  const dir = tempDir('scan-serve');
  try {
    const config = join(dir.dir, 'tack.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { poisoned: { command: process.execPath, args: [POISONED, input, String(chars)] } },
      }),
    );
    const port = await freePort();
    const started = performance.now();
    const service = await startService(
      process.execPath,
      [BIN, 'serve', '--config', config, '--http', `127.0.0.1:${port}`],
      {
        env: { ...process.env, TACK_HOME: join(dir.dir, 'home') },
        ready: /tack serve: .* at http/,
        timeoutMs: 600_000,
      },
    );
    const ms = performance.now() - started;
    const held = /held back/.test(service.output());
    await service.stop();
    return { ms, held };
  } finally {
    dir.remove();
  }
}

async function serving(): Promise<Record<string, unknown>> {
  const cases = [
    { input: 'benign', chars: 0 },
    { input: 'newlines', chars: 200_000 },
    { input: '.ssh', chars: MB },
  ];
  const times = new Map<string, number[]>(cases.map((c) => [c.input, []]));
  const held = new Map<string, boolean>();
  await serveStart('benign', 0); // warm-up: the page cache, the compile cache
  for (let run = 0; run < 5; run++) {
    // A rotating order, so no case always runs first after a quiet moment.
    for (const c of [...cases.slice(run % 3), ...cases.slice(0, run % 3)]) {
      const result = await serveStart(c.input, c.chars);
      times.get(c.input)!.push(result.ms);
      held.set(c.input, result.held);
    }
  }
  const benign = median(times.get('benign')!);
  return Object.fromEntries(
    cases.map((c) => {
      const sorted = times.get(c.input)!;
      return [
        c.input,
        {
          chars: c.chars,
          medianMs: round(median(sorted)),
          minMs: round(Math.min(...sorted)),
          maxMs: round(Math.max(...sorted)),
          overBenignMs: round(median(sorted) - benign),
          held: held.get(c.input),
        },
      ];
    }),
  );
}

function table(rows: DefinitionResult[]): string {
  const lines = [
    `${'family'.padEnd(16)} ${'input'.padEnd(30)} ${'1 MiB, bounded'.padStart(15)} ${'read whole'.padStart(11)}`,
  ];
  for (const r of rows)
    lines.push(
      `${r.family.padEnd(16)} ${r.input.padEnd(30)} ${`${r.medianMs} ms`.padStart(15)} ${`${r.wholeMedianMs} ms`.padStart(11)}${r.withinTarget ? '' : '  over target'}`,
    );
  return lines.join('\n');
}

export async function runScan(options: { serve?: boolean } = {}): Promise<Record<string, unknown>> {
  log('scan: one definition per worst case, 1 MiB each');
  const perDefinition = definitions();
  for (const line of table(perDefinition).split('\n')) log(line);
  const perSchema = schemas();
  for (const s of perSchema) log(`schema ${s.schema}: ${s.medianMs} ms`);
  const perCatalog = catalogs();
  for (const c of perCatalog)
    log(
      `hostile catalog of ${c.tools} tools on ${c.servers} servers: ${c.medianMs} ms (${c.msPerTool} ms per tool)`,
    );
  const first = perCatalog[0]!;
  const last = perCatalog[perCatalog.length - 1]!;
  const serve = options.serve === false ? undefined : await serving();
  if (serve) log(`tack serve --http start: ${JSON.stringify(serve)}`);
  const worst = perDefinition.reduce((a, b) => (b.medianMs > a.medianMs ? b : a));
  return {
    runs: RUNS,
    scanBytes: DEFAULT_SCAN_BYTES,
    targetMs: TARGET_MS,
    worst: { input: worst.input, medianMs: worst.medianMs },
    allWithinTarget: perDefinition.every((r) => r.withinTarget) && perSchema.every((s) => s.withinTarget),
    definitions: perDefinition,
    schemas: perSchema,
    catalogs: perCatalog,
    // 1 when the time per tool is the same at 16 times the catalog; a quadratic check would make it about 16.
    catalogPerToolGrowth: round(last.msPerTool / first.msPerTool, 2),
    ...(serve ? { serveStart: serve } : {}),
  };
}

if (isMain(import.meta.url)) {
  process.stdout.write(
    `${JSON.stringify(await runScan({ serve: !process.argv.includes('--no-serve') }), null, 2)}\n`,
  );
}
