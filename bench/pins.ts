import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/client';
import { Catalog } from '../src/mcp/catalog.js';
import { DefinitionGuard, type ServerDefinitions } from '../src/security/pins.js';
import { TackStore } from '../src/store/store.js';
import { mulberry32 } from './random.js';
import { isMain, log, median, round, tempDir } from './util.js';

/**
 * What pinning costs on every catalog change. The harness and the gateway review the whole catalog whenever it
 * changes (a connect, a list_changed): first sight pins and scans each definition; later reviews hash and look
 * each one up (a new session: one query per server); a rebuild with unchanged listings is answered from the last
 * review. Compared, in the same run, with building the catalog itself (which also happens on every change).
 * A real SQLite file in a temporary directory, WAL as tack opens it.
 */
const SIZES = [50, 500, 5000];
const RUNS = 5;

function tools(n: number, seed: number): Tool[] {
  const random = mulberry32(seed);
  const words = [
    'list',
    'get',
    'create',
    'update',
    'delete',
    'search',
    'issue',
    'file',
    'page',
    'user',
    'note',
  ];
  const word = () => words[Math.floor(random() * words.length)]!;
  return Array.from({ length: n }, (_, i) => ({
    name: `${word()}_${word()}_${i}`,
    description: `${word()} the ${word()} of a ${word()}; returns the ${word()} as JSON. Use it to ${word()} ${word()} records.`,
    inputSchema: {
      type: 'object',
      properties: {
        id: { type: 'string', description: `The ${word()} id` },
        limit: { type: 'number', description: 'How many to return' },
      },
      required: ['id'],
    },
    annotations: { readOnlyHint: random() < 0.5 },
  }));
}

function servers(all: Tool[], perServer: number): ServerDefinitions[] {
  const out: ServerDefinitions[] = [];
  for (let i = 0; i * perServer < all.length; i++)
    out.push({
      server: `s${i}`,
      identity: `s${i} stdio:node s${i}.js`,
      tools: all.slice(i * perServer, (i + 1) * perServer),
      instructions: `Server s${i}: use list tools before get tools.`,
    });
  return out;
}

export async function runPins(): Promise<Record<string, unknown>> {
  const results: Record<string, unknown> = {};
  for (const n of SIZES) {
    const catalogTools = tools(n, n);
    const defs = servers(catalogTools, 50);
    const listings = defs.map((d) => ({
      server: d.server,
      tools: d.tools as Tool[],
      resources: [],
      resourceTemplates: [],
      prompts: [],
    }));
    const first: number[] = [];
    const steady: number[] = [];
    const rebuild: number[] = [];
    const build: number[] = [];
    for (let run = 0; run < RUNS; run++) {
      const dir = tempDir('tack-bench-pins-');
      const store = TackStore.open(join(dir.dir, 'store.db'));
      try {
        // A new guard per run: its scan memo starts empty, as in a new process.
        let started = performance.now();
        const review = await new DefinitionGuard(store.pins).reviewAll(defs);
        first.push(performance.now() - started);
        if (review.pinned !== n + defs.length)
          throw new Error(`pinned ${review.pinned}, expected ${n + defs.length}`);
        const guard = new DefinitionGuard(store.pins);
        started = performance.now();
        const again = await guard.reviewAll(defs);
        steady.push(performance.now() - started);
        if (again.pinned !== 0 || again.held.length !== 0) throw new Error('steady review changed pins');
        // A catalog rebuilt after a status change: the same listing arrays, the same guard.
        started = performance.now();
        await guard.reviewAll(defs);
        rebuild.push(performance.now() - started);
        started = performance.now();
        new Catalog(listings);
        build.push(performance.now() - started);
      } finally {
        store.close();
        dir.remove();
      }
    }
    const result = {
      tools: n,
      servers: defs.length,
      firstSightMs: round(median(first)),
      steadyReviewMs: round(median(steady), 2),
      unchangedRebuildMs: round(median(rebuild), 3),
      catalogBuildMs: round(median(build), 2),
      steadyPerToolUs: round((median(steady) / n) * 1000, 1),
    };
    log(
      `pins ${n} tools: first ${result.firstSightMs} ms, steady ${result.steadyReviewMs} ms, catalog ${result.catalogBuildMs} ms`,
    );
    results[`tools${n}`] = result;
  }
  return { runs: RUNS, sizes: results };
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runPins(), null, 2)}\n`);
}
