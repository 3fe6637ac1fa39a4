/** A script's limits, their wording, and the CPU clock the engine's thread and tack's main thread both read. */

export interface ScriptLimits {
  /** Time spent running JavaScript in the engine (not waiting for tools). */
  cpuMs: number;
  /** The whole script, tool calls included. */
  wallMs: number;
  /** The engine's heap. */
  memoryBytes: number;
  /** The engine's stack; kept under the thread's own so deep recursion fails inside QuickJS. */
  stackBytes: number;
  /** Tool calls per script. */
  maxCalls: number;
  /** console output plus the return value, in characters. */
  maxOutputChars: number;
  /** The script's own text, in characters: longer is refused before any work on it (type stripping, parsing). */
  maxCodeChars: number;
}

export const DEFAULT_SCRIPT_LIMITS: ScriptLimits = {
  cpuMs: 5_000,
  wallMs: 120_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxCalls: 100,
  maxOutputChars: 20_000,
  // A model writes a script in one tool call: 200,000 characters is some 50,000 tokens, more than a model's
  // output limit, so only a client pasting data into the script reaches it.
  maxCodeChars: 200_000,
};

export type LimitName = 'cpu' | 'wall' | 'memory' | 'stack' | 'calls' | 'output' | 'size';

/** What the model is told when a limit stopped its script: the limit, and what to do instead. */
export function limitText(l: ScriptLimits, limit: LimitName): string {
  switch (limit) {
    case 'cpu':
      return `the script used more than ${l.cpuMs} ms of CPU time (an endless loop?); do less work per script`;
    case 'wall':
      return `the script ran longer than ${l.wallMs} ms (tool calls included); split the work into smaller scripts`;
    case 'memory':
      return `the script used more than ${Math.round(l.memoryBytes / 1024 / 1024)} MiB of memory; keep less data in it (filter results as they come)`;
    case 'stack':
      return 'the script recursed too deeply (stack overflow); use a loop instead of deep recursion';
    case 'calls':
      return `the script made more than ${l.maxCalls} tool calls; batch the work or split it into several scripts`;
    case 'output':
      return `the output passed ${l.maxOutputChars} characters`;
    case 'size':
      return `the script is longer than ${l.maxCodeChars} characters; pass less data in the script's text (let it fetch what it needs with tool calls)`;
  }
}

/** A script's text is refused for its length: how long it is, and the limit. */
export function sizeText(l: ScriptLimits, length: number): string {
  return `the script is ${length} characters long, over the limit of ${l.maxCodeChars}; pass less data in the script's text (let it fetch what it needs with tool calls)`;
}

/**
 * Stripping a TypeScript script's types ran into its CPU or wall limit (sucrase's work can double with each level
 * of some nestings: 21 levels of `<T>(` took 14 s): it runs on the engine's thread, under the script's limits.
 */
export function strippingText(l: ScriptLimits, limit: 'cpu' | 'wall'): string {
  const ms = limit === 'cpu' ? l.cpuMs : l.wallMs;
  return `TypeScript: stripping the types took longer than the script's time limit of ${ms} ms; write \`x as T\` instead of nested \`<T>(x)\` assertions, use fewer type annotations, or send the script as JavaScript`;
}

/**
 * Microseconds on the monotonic clock, the same on every thread of the process (each thread's `performance.now()`
 * has its own origin, and `timeOrigin` is read from the wall clock, which a clock step moves).
 */
function nowMicros(): bigint {
  return process.hrtime.bigint() / 1000n;
}

/**
 * The engine's CPU time, in one shared slot: the engine's thread writes it, tack's main thread reads it to stop a
 * script the engine's own interrupt check cannot (a long built-in runs between two checks). One 64-bit value
 * written and read with Atomics, so a reader never sees half an update: while the engine runs, the instant it
 * would have started had all its time so far been one stretch (positive); while it waits, minus the time used.
 */
export class CpuClock {
  readonly #slot: BigInt64Array;

  constructor(buffer: SharedArrayBuffer = new SharedArrayBuffer(8)) {
    this.#slot = new BigInt64Array(buffer, 0, 1);
  }

  get buffer(): SharedArrayBuffer {
    return this.#slot.buffer as SharedArrayBuffer;
  }

  /** Back to zero, not running (a new script). */
  reset(): void {
    Atomics.store(this.#slot, 0, 0n);
  }

  start(): void {
    const value = Atomics.load(this.#slot, 0);
    if (value <= 0n) Atomics.store(this.#slot, 0, nowMicros() + value);
  }

  stop(): void {
    const since = Atomics.load(this.#slot, 0);
    if (since > 0n) Atomics.store(this.#slot, 0, -(nowMicros() - since));
  }

  running(): boolean {
    return Atomics.load(this.#slot, 0) > 0n;
  }

  /** Milliseconds of engine time so far, the current stretch included. */
  usedMs(): number {
    const value = Atomics.load(this.#slot, 0);
    return Number(value > 0n ? nowMicros() - value : -value) / 1000;
  }
}
