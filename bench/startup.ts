import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtures, isMain, log, median, repoRoot, round, tempDir } from './util.js';

/**
 * Start-up as a user sees it (issue 18): whole fresh processes, each command against its anchor, the two run in
 * turn (A B A B ...) so a drifting machine weighs on both alike. Wall time from spawn to exit.
 *
 *   tack --version, tack --help          vs node -e 0
 *   tack tools, one stdio server, cold   vs the bare SDK listing the same server (a fresh store: era probe,
 *                                           tokenizer loaded)
 *   tack tools, one stdio server, warm   vs the same anchor (era cached, token counts cached)
 *   tack servers, the three examples     vs the SDK listing of one of them
 */
export interface StartupOptions {
  runs?: number;
}

interface Sample {
  wallMs: number;
}

const BIN = join(repoRoot, 'bin', 'tack.js');
const SDK_LIST = join(repoRoot, 'dist', 'bench', 'fixtures', 'sdk-list.js');
const EXAMPLES = join(repoRoot, 'examples', 'tack.json');

function run(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, {
      cwd: repoRoot,
      env,
      stdio: ['ignore', 'ignore', 'ignore'],
    });
    child.once('error', reject);
    child.once('exit', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited with ${code}`));
      resolve({ wallMs });
    });
  });
}

function summary(samples: readonly Sample[]) {
  const walls = samples.map((s) => s.wallMs).sort((a, b) => a - b);
  return {
    runs: walls.length,
    minMs: round(walls[0]!),
    medianMs: round(median(walls)),
    maxMs: round(walls.at(-1)!),
  };
}

export async function runStartup(options: StartupOptions = {}) {
  const runs = options.runs ?? 9;
  const tmp = tempDir('startup');
  try {
    const oneServer = join(tmp.dir, 'one.json');
    writeFileSync(
      oneServer,
      JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [fixtures.dual] } } }),
    );
    const home = (name: string) => ({ ...process.env, TACK_HOME: join(tmp.dir, name) });
    let coldHomes = 0;
    const pairs: Array<{
      name: string;
      tack: (i: number) => Promise<Sample>;
      anchorName: string;
      anchor: () => Promise<Sample>;
      target?: string;
    }> = [
      {
        name: 'tack --version',
        tack: () => run([BIN, '--version'], home('warm')),
        anchorName: 'node -e 0',
        anchor: () => run(['-e', '0'], process.env),
        target: 'under 150 ms',
      },
      {
        name: 'tack --help',
        tack: () => run([BIN, '--help'], home('warm')),
        anchorName: 'node -e 0',
        anchor: () => run(['-e', '0'], process.env),
        target: 'under 150 ms',
      },
      {
        name: 'tack tools, one stdio server, cold (fresh store)',
        tack: () => run([BIN, 'tools', '--config', oneServer], home(`cold-${coldHomes++}`)),
        anchorName: 'bare SDK: connect, list tools, exit',
        anchor: () => run([SDK_LIST, fixtures.dual], process.env),
      },
      {
        name: 'tack tools, one stdio server, warm',
        tack: () => run([BIN, 'tools', '--config', oneServer], home('warm')),
        anchorName: 'bare SDK: connect, list tools, exit',
        anchor: () => run([SDK_LIST, fixtures.dual], process.env),
      },
      {
        name: 'tack servers, the three examples, warm',
        tack: () => run([BIN, 'servers', '--config', EXAMPLES], home('warm')),
        anchorName: 'bare SDK: connect, list tools, exit (one server)',
        anchor: () => run([SDK_LIST, fixtures.dual], process.env),
      },
    ];
    // Warm the warm store once (era verdicts, token counts) before anything is measured.
    await run([BIN, 'tools', '--config', oneServer], home('warm'));
    await run([BIN, 'servers', '--config', EXAMPLES], home('warm'));
    const results: Record<string, unknown> = {};
    for (const pair of pairs) {
      const tack: Sample[] = [];
      const anchor: Sample[] = [];
      await pair.tack(0);
      await pair.anchor();
      for (let i = 0; i < runs; i++) {
        if (i % 2) {
          tack.push(await pair.tack(i));
          anchor.push(await pair.anchor());
        } else {
          anchor.push(await pair.anchor());
          tack.push(await pair.tack(i));
        }
      }
      const t = summary(tack);
      const a = summary(anchor);
      results[pair.name] = {
        tack: t,
        anchor: { name: pair.anchorName, ...a },
        ratioMedian: round(t.medianMs / a.medianMs, 2),
        ...(pair.target ? { target: pair.target, met: t.medianMs < 150 } : {}),
      };
      log(`startup: ${pair.name}: ${t.medianMs} ms vs ${pair.anchorName} ${a.medianMs} ms`);
    }
    return {
      date: new Date().toISOString(),
      description: `Whole fresh processes, ${runs} runs per side after one unmeasured run, tack and its anchor in turn; wall time from spawn to exit, min / median / max.`,
      results,
    };
  } finally {
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runStartup(), null, 2)}\n`);
}
