import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
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
 *   tack tools, the three examples, cold vs the bare SDK listing the same three (each side a fresh state folder)
 *   tack tools, the three examples, warm vs the same anchor
 *
 * CPU time (user + system, the process and the children it waited for: the servers) is taken by /usr/bin/time
 * where it exists, on both sides alike. The target of the light install: cold at most 1.3x warm.
 */
export interface StartupOptions {
  runs?: number;
  /** Another build's bin/tack.js to measure (another checkout's), against the same servers and anchors. */
  bin?: string;
}

interface Sample {
  wallMs: number;
  cpuMs?: number;
}

/** /usr/bin/time reports the CPU of the process and of every child it waited for (the MCP servers). */
const TIME = existsSync('/usr/bin/time') ? '/usr/bin/time' : undefined;
const CPU_LINE = /^tack-bench-cpu ([\d.]+) ([\d.]+)$/m;

const SDK_LIST = join(repoRoot, 'dist', 'bench', 'fixtures', 'sdk-list.js');
const EXAMPLES = join(repoRoot, 'examples', 'tack.json');

function run(args: readonly string[], env: NodeJS.ProcessEnv): Promise<Sample> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const [command, argv] = TIME
      ? [TIME, ['-f', 'tack-bench-cpu %U %S', process.execPath, ...args]]
      : [process.execPath, [...args]];
    const child = spawn(command, argv, { cwd: repoRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr = (stderr + chunk).slice(-4096);
    });
    child.once('error', reject);
    child.once('close', (code) => {
      const wallMs = performance.now() - started;
      if (code !== 0) return reject(new Error(`${args.join(' ')} exited with ${code}: ${stderr}`));
      const cpu = CPU_LINE.exec(stderr);
      resolve(cpu ? { wallMs, cpuMs: (Number(cpu[1]) + Number(cpu[2])) * 1000 } : { wallMs });
    });
  });
}

function summary(samples: readonly Sample[]) {
  const walls = samples.map((s) => s.wallMs).sort((a, b) => a - b);
  const cpus = samples.flatMap((s) => (s.cpuMs === undefined ? [] : [s.cpuMs]));
  return {
    runs: walls.length,
    minMs: round(walls[0]!),
    medianMs: round(median(walls)),
    maxMs: round(walls.at(-1)!),
    ...(cpus.length ? { cpuMedianMs: round(median(cpus)) } : {}),
  };
}

export async function runStartup(options: StartupOptions = {}) {
  const runs = options.runs ?? 9;
  const BIN = options.bin ?? join(repoRoot, 'bin', 'tack.js');
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
        name: 'tack tools, the three examples, cold (fresh store)',
        tack: () => run([BIN, 'tools', '--config', EXAMPLES], home(`cold-${coldHomes++}`)),
        anchorName: 'bare SDK: connect the same three, list tools, exit (fresh state folder)',
        anchor: () => run([SDK_LIST, EXAMPLES], home(`cold-${coldHomes++}`)),
      },
      {
        name: 'tack tools, the three examples, warm',
        tack: () => run([BIN, 'tools', '--config', EXAMPLES], home('warm')),
        anchorName: 'bare SDK: connect the same three, list tools, exit',
        anchor: () => run([SDK_LIST, EXAMPLES], home('warm')),
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
    await run([BIN, 'tools', '--config', EXAMPLES], home('warm'));
    await run([BIN, 'servers', '--config', EXAMPLES], home('warm'));
    const results: Record<string, { tack: ReturnType<typeof summary>; [key: string]: unknown }> = {};
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
        ...(t.cpuMedianMs && a.cpuMedianMs
          ? { cpuRatioMedian: round(t.cpuMedianMs / a.cpuMedianMs, 2) }
          : {}),
        ...(pair.target ? { target: pair.target, met: t.medianMs < 150 } : {}),
      };
      log(`startup: ${pair.name}: ${t.medianMs} ms vs ${pair.anchorName} ${a.medianMs} ms`);
    }
    const cold = results['tack tools, the three examples, cold (fresh store)']!.tack;
    const warm = results['tack tools, the three examples, warm']!.tack;
    const coldOverWarm = round(cold.medianMs / warm.medianMs, 2);
    return {
      date: new Date().toISOString(),
      bin: BIN,
      coldOverWarm: {
        command: 'tack tools, the three examples',
        wall: coldOverWarm,
        ...(cold.cpuMedianMs && warm.cpuMedianMs
          ? { cpu: round(cold.cpuMedianMs / warm.cpuMedianMs, 2) }
          : {}),
        target: 'cold at most 1.3x warm (wall)',
        met: coldOverWarm <= 1.3,
      },
      description: `Whole fresh processes, ${runs} runs per side after one unmeasured run, tack and its anchor in turn; wall time from spawn to exit, min / median / max.`,
      results,
    };
  } finally {
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  const option = (name: string) => {
    const at = process.argv.indexOf(name);
    return at === -1 ? undefined : process.argv[at + 1];
  };
  const runs = option('--runs');
  const bin = option('--bin');
  const options: StartupOptions = { ...(runs ? { runs: Number(runs) } : {}), ...(bin ? { bin } : {}) };
  process.stdout.write(`${JSON.stringify(await runStartup(options), null, 2)}\n`);
}
