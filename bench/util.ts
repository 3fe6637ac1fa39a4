import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { Client, type Transport } from '@modelcontextprotocol/client';
import type { StdioServerConfig } from '../src/config/load.js';
import { countTokens } from '../src/tokens/count.js';
import { alive } from '../test/helpers/processes.js';

/** The repository root: this file runs as dist/bench/util.js. */
export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export const fixtures = {
  /** Dual era (2026-07-28 and 2025), `--pid-file <f>` built in. */
  dual: join(repoRoot, 'dist/test/fixtures/servers/stdio-server.js'),
  /** The legacy fixture behind a two-line wrapper that appends its pid to `--pid-file <f>`. */
  legacyWithPid: join(repoRoot, 'dist/bench/fixtures/legacy-pid-server.js'),
} as const;

/**
 * Token figures in benchmarks are Qwen3 tokenizer counts (a dev dependency), whatever model a user configures, so
 * they stay comparable with the figures already in docs/.
 */
export const qwen3Tokens = (text: string): Promise<number> => countTokens(text, 'qwen3');

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

export function tempDir(prefix: string): { dir: string; remove(): void } {
  const dir = mkdtempSync(join(tmpdir(), `tack-bench-${prefix}-`));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function stdioServer(name: string, script: string, args: string[] = []): StdioServerConfig {
  return {
    name,
    transport: 'stdio',
    command: process.execPath,
    args: [script, ...args],
    env: {},
    cwd: repoRoot,
    enabled: true,
    startupTimeoutMs: 30_000,
    callTimeoutMs: 60_000,
    enabledTools: undefined,
    disabledTools: undefined,
    trusted: false,
    alwaysLoad: false,
    source: { file: '<bench>', scope: 'explicit', format: 'tack' },
  };
}

export const round = (value: number, digits = 1): number => Number(value.toFixed(digits));

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Nearest-rank percentile (p in 0..100) of an already sorted array. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

/** The 50th and 99th percentiles of an already sorted array, rounded to `digits`. */
export function p50p99(sorted: readonly number[], digits: number): { p50Ms: number; p99Ms: number } {
  return { p50Ms: round(percentile(sorted, 50), digits), p99Ms: round(percentile(sorted, 99), digits) };
}

/** Median, min and max of wall-time samples in ms, plus the samples themselves. */
export function summarize(samples: readonly number[]): {
  medianMs: number;
  minMs: number;
  maxMs: number;
  samplesMs: number[];
} {
  return {
    medianMs: round(median(samples)),
    minMs: round(Math.min(...samples)),
    maxMs: round(Math.max(...samples)),
    samplesMs: samples.map((s) => round(s)),
  };
}

/**
 * The pids the fixtures append to a pid file: every process they start, probe siblings included. Reading
 * the lines added since a mark counts the processes one connect spawned.
 */
export class PidFile {
  #seen = 0;

  constructor(readonly file: string) {}

  #all(): number[] {
    if (!existsSync(this.file)) return [];
    return readFileSync(this.file, 'utf8')
      .split('\n')
      .filter((line) => line.trim() !== '')
      .map(Number);
  }

  /** The pids written since the previous call. */
  takeNew(): number[] {
    const all = this.#all();
    const fresh = all.slice(this.#seen);
    this.#seen = all.length;
    return fresh;
  }
}

/**
 * Waits until the given processes (started by this benchmark) have exited, so one repetition's teardown does
 * not eat the next one's CPU. Returns how long that took and how many had to be killed after `timeoutMs`.
 */
export async function waitForExit(
  pids: readonly number[],
  timeoutMs = 10_000,
): Promise<{ waitedMs: number; killed: number }> {
  const started = performance.now();
  let pending = pids.filter(alive);
  while (pending.length > 0 && performance.now() - started < timeoutMs) {
    await sleep(5);
    pending = pending.filter(alive);
  }
  for (const pid of pending) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
  return { waitedMs: performance.now() - started, killed: pending.length };
}

/** A bare SDK client, auto-negotiating the protocol era, connected over `transport`. */
export async function sdkClient(transport: Transport, name = 'bench'): Promise<Client> {
  const client = new Client({ name, version: '0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(transport);
  return client;
}

let gcFunction: (() => void) | undefined;

/** A full GC before reading memory figures (enabled at runtime, so `node dist/bench/run.js` needs no flag). */
export function collectGarbage(): void {
  if (!gcFunction) {
    setFlagsFromString('--expose-gc');
    gcFunction = runInNewContext('gc') as () => void;
  }
  gcFunction();
}

export function memory(): { rssMB: number; heapUsedMB: number } {
  collectGarbage();
  const { rss, heapUsed } = process.memoryUsage();
  return { rssMB: round(rss / 2 ** 20), heapUsedMB: round(heapUsed / 2 ** 20) };
}

/** True when this module is the script node was started with (`node dist/bench/connect.js`). */
export function isMain(moduleUrl: string): boolean {
  return process.argv[1] !== undefined && fileURLToPath(moduleUrl) === process.argv[1];
}

const USER_HZ_MS = 10; // /proc counts CPU in clock ticks of 1/100 s on Linux

/** utime + stime (fields 14 and 15) or cutime + cstime (16 and 17) from a /proc stat line, in ms. */
function statCpuMs(file: string, first: 11 | 13): number | undefined {
  try {
    const fields = readFileSync(file, 'utf8').split(') ')[1]!.split(' '); // fields[0] is field 3
    const ticks = Number(fields[first]) + Number(fields[first + 1]);
    return Number.isFinite(ticks) ? ticks * USER_HZ_MS : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Measures the CPU time (user + system) the server processes of one connect burned up to a point: the live
 * ones from /proc/<pid>/stat, the exited ones (a probe sibling) from this process's reaped-children total,
 * which Node updates as it reaps them. Linux only: elsewhere the result is undefined.
 */
export function childCpuMeter(): (livePids: readonly number[]) => number | undefined {
  const before = statCpuMs('/proc/self/stat', 13);
  return (livePids) => {
    let live = 0;
    for (const pid of livePids) live += statCpuMs(`/proc/${pid}/stat`, 11) ?? 0;
    const reaped = statCpuMs('/proc/self/stat', 13);
    return before === undefined || reaped === undefined ? undefined : reaped - before + live;
  };
}

/** The bytes of the files under `dir`, subfolders included (a corpus's or a cache folder's size). */
export function folderBytes(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    total += entry.isDirectory() ? folderBytes(path) : statSync(path).size;
  }
  return total;
}
