import releaseSync from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { errorMessage } from '../errors.js';

/**
 * The isolated runtime of code mode: a script runs in QuickJS compiled to WebAssembly (quickjs-emscripten), a
 * separate JavaScript engine with its own heap inside one linear memory. The script sees the language's own
 * globals, `console` and the `mcp` object, nothing else: no `require`, `process`, `fetch`, timers, module loader,
 * file system or network exist in it, and no host object crosses into it (tool arguments and results cross as
 * JSON strings only). node:vm was not an option: it shares the host's heap and object graph, and its own docs
 * say it is not a security mechanism.
 *
 * Limits, each ending the script with an error result the model can act on: CPU time inside the engine (the
 * interrupt handler, polled by the interpreter), memory (QuickJS's allocator limit), stack depth (QuickJS's own
 * check, set well under Node's stack so a deep recursion is a JavaScript error, not a host crash), the number of
 * tool calls, the output size, and wall time (tool calls included: the calls in flight are aborted).
 */

export interface ScriptLimits {
  /** Time spent running JavaScript in the engine (not waiting for tools). */
  cpuMs: number;
  /** The whole script, tool calls included. */
  wallMs: number;
  /** The engine's heap. */
  memoryBytes: number;
  /** The engine's stack; kept under Node's own (~1 MB) so deep recursion fails inside QuickJS. */
  stackBytes: number;
  /** Tool calls per script. */
  maxCalls: number;
  /** console output plus the return value, in characters. */
  maxOutputChars: number;
}

export const DEFAULT_SCRIPT_LIMITS: ScriptLimits = {
  cpuMs: 5_000,
  wallMs: 120_000,
  memoryBytes: 64 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxCalls: 100,
  maxOutputChars: 20_000,
};

export type LimitName = 'cpu' | 'wall' | 'memory' | 'stack' | 'calls' | 'output';

/**
 * The tool API a script gets: `mcp.<server>.<tool>`, by the identifiers the declarations use, to the name the
 * call is made under (the catalog's `mcp__server__tool`).
 */
export type ApiBinding = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** What a tool call gave the script: a value (the structured result, or the text), or an error it can catch. */
export type HostCallResult = { ok: true; value: unknown } | { ok: false; error: string };

/** Runs one tool call for the script; `signal` ends when the script does. */
export type HostCall = (target: string, args: unknown, signal: AbortSignal) => Promise<HostCallResult>;

export interface ScriptOutcome {
  /** `ok`: the script returned; `error`: it threw (or did not parse); `limit`: a limit stopped it. */
  status: 'ok' | 'error' | 'limit' | 'aborted';
  /** The return value as text (a string as it is, anything else as JSON); absent for `undefined`. */
  value?: string;
  /** console output, one line per call, cut at the output limit. */
  logs: string[];
  /** The output limit cut the logs or the value. */
  truncated: boolean;
  error?: string;
  limit?: LimitName;
  calls: number;
  /** Time spent running JavaScript in the engine. */
  cpuMs: number;
}

/** 64 KiB pages: 256 MiB, the most the engine's memory may grow to (the heap limit of a script is below it). */
const MAX_WASM_PAGES = 4096;

// The package's types are CommonJS-shaped; its ESM build's default export is the variant itself.
const variant = releaseSync as unknown as QuickJSSyncVariant;

/** Node's WebAssembly global (tack's `lib` setting leaves the DOM types, and with them its declaration, out). */
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => unknown };
};

let modulePromise: Promise<QuickJSWASMModule> | undefined;

/**
 * The compiled engine, shared by every script (each gets its own runtime and heap). A host-level failure inside
 * the engine (a trap) may leave the module's memory inconsistent: the module is then dropped and made anew.
 */
function engine(): Promise<QuickJSWASMModule> {
  // The engine's own limit does not count every allocation (measured: a loop of `new Array(1e6).fill(1)` under a
  // 64 MiB limit grew the linear memory to 2 GB, which WebAssembly never gives back); a memory with a maximum
  // bounds what any script can take of the process, whatever the allocator does.
  const memory = new wasm.Memory({ initial: 256, maximum: MAX_WASM_PAGES });
  modulePromise ??= newQuickJSWASMModuleFromVariant(
    newVariant(variant, { wasmMemory: memory as never }),
  ).catch((error: unknown) => {
    modulePromise = undefined;
    throw error;
  });
  return modulePromise;
}

/** Loads the engine ahead of the first script (its compile is the bulk of the first start-up). */
export async function warmUp(): Promise<void> {
  await engine();
}

/**
 * The bootstrap, evaluated before the script: `console` and a frozen `mcp` built from the binding, over the two
 * host functions, which are then removed from the global object (the closures keep them).
 */
const BOOTSTRAP = `(function (hostCall, hostLog, binding) {
  'use strict';
  const show = (v) => {
    if (typeof v === 'string') return v;
    try { const s = JSON.stringify(v); return s === undefined ? String(v) : s; } catch (e) { return String(v); }
  };
  const log = (...args) => { hostLog(args.map(show).join(' ')); };
  globalThis.console = Object.freeze({ log, info: log, warn: log, error: log, debug: log });
  const parse = JSON.parse;
  const stringify = JSON.stringify;
  const api = Object.create(null);
  for (const server of Object.keys(binding)) {
    const tools = Object.create(null);
    for (const tool of Object.keys(binding[server])) {
      const target = binding[server][tool];
      tools[tool] = function (args) {
        const json = stringify(args === undefined ? {} : args);
        if (typeof json !== 'string') throw new TypeError('mcp.' + server + '.' + tool + ': the arguments must be a JSON object');
        return hostCall(target, json).then((text) => parse(text));
      };
      Object.freeze(tools[tool]);
    }
    api[server] = Object.freeze(tools);
  }
  Object.defineProperty(globalThis, 'mcp', { value: Object.freeze(api), writable: false, configurable: false });
  // Typed arrays allocate outside the engine's counted heap (measured: a loop of Uint8Array(1e6) grew the
  // process by 2 GB under a 64 MiB limit); a tool script has no use for them.
  for (const name of ['ArrayBuffer', 'SharedArrayBuffer', 'DataView', 'Atomics', 'WebAssembly',
    'Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array',
    'Float32Array', 'Float64Array', 'BigInt64Array', 'BigUint64Array', 'Float16Array']) delete globalThis[name];
  delete globalThis.__tackCall;
  delete globalThis.__tackLog;
})(globalThis.__tackCall, globalThis.__tackLog, JSON.parse(globalThis.__tackBinding));
delete globalThis.__tackBinding;`;

/** The name the script's function is evaluated under (its errors' stack traces say it). */
const SCRIPT_FILE = 'script.js';

/**
 * Runs `code` (the body of an async function: `await` the tools, `return` the result) against `binding`, each
 * tool call through `call`. Never throws for anything the script does; the outcome says what happened.
 */
export async function runScript(
  code: string,
  binding: ApiBinding,
  call: HostCall,
  limits: ScriptLimits = DEFAULT_SCRIPT_LIMITS,
  signal?: AbortSignal,
): Promise<ScriptOutcome> {
  const module = await engine();
  const run = new ScriptRun(module, binding, call, limits, signal);
  try {
    return await run.execute(code);
  } finally {
    if (!run.dispose()) modulePromise = undefined;
  }
}

class ScriptRun {
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #binding: ApiBinding;
  readonly #call: HostCall;
  readonly #limits: ScriptLimits;
  readonly #outer: AbortSignal | undefined;
  /** Ends the calls in flight when the script ends (a limit, an abort, or its end). */
  readonly #stop = new AbortController();
  readonly #deadline: number;
  readonly #logs: string[] = [];
  #outputChars = 0;
  #truncated = false;
  #cpuMs = 0;
  /** When the engine started running this time (undefined: it is not running). */
  #runningSince: number | undefined;
  #limit: LimitName | undefined;
  #calls = 0;
  readonly #pending = new Set<QuickJSDeferredPromise>();
  /** Resolved whenever a call settles, so the driver runs the engine's jobs. */
  #wake: () => void = () => {};

  constructor(
    module: QuickJSWASMModule,
    binding: ApiBinding,
    call: HostCall,
    limits: ScriptLimits,
    signal: AbortSignal | undefined,
  ) {
    this.#binding = binding;
    this.#call = call;
    this.#limits = limits;
    this.#outer = signal;
    this.#deadline = Date.now() + limits.wallMs;
    this.#runtime = module.newRuntime();
    this.#runtime.setMemoryLimit(limits.memoryBytes);
    this.#runtime.setMaxStackSize(limits.stackBytes);
    this.#runtime.setInterruptHandler(() => this.#shouldInterrupt());
    this.#context = this.#runtime.newContext();
  }

  async execute(code: string): Promise<ScriptOutcome> {
    if (this.#outer?.aborted) return this.#outcome('aborted', { error: 'interrupted before it started' });
    const onAbort = () => {
      this.#stop.abort();
      this.#wake();
    };
    this.#outer?.addEventListener('abort', onAbort, { once: true });
    const timer = setTimeout(() => {
      this.#limit ??= 'wall';
      onAbort();
    }, this.#limits.wallMs);
    try {
      this.#installHost();
      const boot = this.#timed(() => this.#context.evalCode(BOOTSTRAP, 'bootstrap.js'));
      if (boot.error) {
        const message = this.#dumpError(boot.error);
        return this.#outcome('error', { error: `the runtime did not start: ${message}` });
      }
      boot.value.dispose();
      // The script's value as text, inside the engine: only a string crosses back.
      const wrapped = `(async function () {\n${code}\n})().then((v) => v === undefined ? undefined : typeof v === 'string' ? v : JSON.stringify(v, null, 2))`;
      const evaluated = this.#timed(() => this.#context.evalCode(wrapped, SCRIPT_FILE));
      if (evaluated.error) return this.#failed(this.#dumpError(evaluated.error));
      const promise = evaluated.value;
      try {
        return await this.#drive(promise);
      } finally {
        promise.dispose();
      }
    } catch (error) {
      // A trap inside the engine (a stack overflow of the host, an abort): the engine is made anew after it.
      this.#limit ??= /stack/i.test(errorMessage(error)) ? 'stack' : undefined;
      return this.#limit
        ? this.#outcome('limit', { error: this.#limitText(this.#limit) })
        : this.#outcome('error', { error: `the runtime failed: ${errorMessage(error)}` });
    } finally {
      clearTimeout(timer);
      this.#outer?.removeEventListener('abort', onAbort);
      this.#stop.abort();
    }
  }

  /** Runs the engine's jobs until the script's promise settles, waiting for tool calls in between. */
  async #drive(promise: QuickJSHandle): Promise<ScriptOutcome> {
    for (;;) {
      const jobs = this.#timed(() => this.#runtime.executePendingJobs());
      if (jobs.error) {
        const message = this.#dumpError(jobs.error);
        if (this.#limit || this.#stop.signal.aborted) return this.#stopped();
        return this.#failed(message);
      }
      if (this.#limit || this.#stop.signal.aborted) return this.#stopped();
      const state = this.#context.getPromiseState(promise);
      if (state.type === 'fulfilled') {
        const value = state.value;
        const text = this.#context.typeof(value) === 'string' ? this.#context.getString(value) : undefined;
        value.dispose();
        return this.#outcome('ok', text === undefined ? {} : { value: this.#capValue(text) });
      }
      if (state.type === 'rejected') return this.#failed(this.#dumpError(state.error));
      if (this.#pending.size === 0)
        return this.#failed(
          'the script is waiting for something that never comes (a promise no tool call settles); await the mcp calls and return a value',
        );
      await new Promise<void>((resolve) => {
        this.#wake = resolve;
      });
    }
  }

  /** `__tackCall(target, json)` and `__tackLog(line)`, removed from the global object by the bootstrap. */
  #installHost(): void {
    const context = this.#context;
    const hostCall = context.newFunction('__tackCall', (targetHandle, argsHandle) => {
      const target = context.getString(targetHandle);
      const json = context.getString(argsHandle);
      const deferred = context.newPromise();
      this.#calls++;
      if (this.#calls > this.#limits.maxCalls) {
        this.#limit ??= 'calls';
        this.#reject(deferred, this.#limitText('calls'));
        return deferred.handle;
      }
      this.#pending.add(deferred);
      const args: unknown = JSON.parse(json);
      this.#call(target, args, this.#stop.signal).then(
        (result) => {
          if (!this.#pending.delete(deferred)) return;
          if (result.ok) {
            const text = context.newString(JSON.stringify(result.value ?? null));
            deferred.resolve(text);
            text.dispose();
          } else this.#reject(deferred, result.error);
          this.#wake();
        },
        (error: unknown) => {
          if (!this.#pending.delete(deferred)) return;
          this.#reject(deferred, errorMessage(error));
          this.#wake();
        },
      );
      return deferred.handle;
    });
    context.setProp(context.global, '__tackCall', hostCall);
    hostCall.dispose();
    const hostLog = context.newFunction('__tackLog', (lineHandle) => {
      this.#log(context.getString(lineHandle));
    });
    context.setProp(context.global, '__tackLog', hostLog);
    hostLog.dispose();
    const binding = context.newString(JSON.stringify(this.#binding));
    context.setProp(context.global, '__tackBinding', binding);
    binding.dispose();
  }

  #reject(deferred: QuickJSDeferredPromise, message: string): void {
    const error = this.#context.newError(message);
    deferred.reject(error);
    error.dispose();
  }

  #log(line: string): void {
    if (this.#truncated) return;
    const room = this.#limits.maxOutputChars - this.#outputChars;
    if (line.length + 1 > room) {
      this.#logs.push(`${line.slice(0, Math.max(0, room))}…`);
      this.#truncated = true;
      this.#outputChars = this.#limits.maxOutputChars;
      return;
    }
    this.#logs.push(line);
    this.#outputChars += line.length + 1;
  }

  #capValue(text: string): string {
    const room = Math.max(0, this.#limits.maxOutputChars - this.#outputChars);
    if (text.length <= room) return text;
    this.#truncated = true;
    return `${text.slice(0, room)}…`;
  }

  /** Runs engine work, counting its time toward the CPU limit. */
  #timed<T>(work: () => T): T {
    this.#runningSince = performance.now();
    try {
      return work();
    } finally {
      this.#cpuMs += performance.now() - this.#runningSince;
      this.#runningSince = undefined;
    }
  }

  #shouldInterrupt(): boolean {
    if (this.#limit || this.#stop.signal.aborted) return true;
    const running = this.#runningSince === undefined ? 0 : performance.now() - this.#runningSince;
    if (this.#cpuMs + running > this.#limits.cpuMs) this.#limit = 'cpu';
    else if (Date.now() > this.#deadline) this.#limit = 'wall';
    return this.#limit !== undefined;
  }

  /** Ended by a limit or an abort. */
  #stopped(): ScriptOutcome {
    if (this.#limit) return this.#outcome('limit', { error: this.#limitText(this.#limit) });
    return this.#outcome('aborted', { error: 'interrupted' });
  }

  /** The script threw: a limit the engine reports as an error (memory, stack) is named as one. */
  #failed(message: string): ScriptOutcome {
    if (this.#limit || this.#stop.signal.aborted) return this.#stopped();
    if (/out of memory/i.test(message)) {
      this.#limit = 'memory';
      return this.#outcome('limit', { error: this.#limitText('memory') });
    }
    if (/stack overflow/i.test(message)) {
      this.#limit = 'stack';
      return this.#outcome('limit', { error: this.#limitText('stack') });
    }
    return this.#outcome('error', { error: message });
  }

  #limitText(limit: LimitName): string {
    const l = this.#limits;
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
    }
  }

  /** An engine error as one line: `Name: message` and the script's line when known. */
  #dumpError(handle: QuickJSHandle): string {
    try {
      const dumped: unknown = this.#context.dump(handle);
      if (dumped && typeof dumped === 'object') {
        const { name, message, stack } = dumped as { name?: unknown; message?: unknown; stack?: unknown };
        const where = typeof stack === 'string' ? scriptLine(stack) : undefined;
        return `${typeof name === 'string' ? name : 'Error'}: ${String(message)}${where ? ` (${where})` : ''}`;
      }
      return String(dumped);
    } finally {
      handle.dispose();
    }
  }

  #outcome(status: ScriptOutcome['status'], extra: { value?: string; error?: string }): ScriptOutcome {
    return {
      status,
      ...extra,
      logs: this.#logs,
      truncated: this.#truncated,
      ...(this.#limit && status === 'limit' ? { limit: this.#limit } : {}),
      calls: Math.min(this.#calls, this.#limits.maxCalls),
      cpuMs: Math.round(this.#cpuMs),
    };
  }

  /** Frees the engine; false when it could not be freed cleanly (the module is then replaced). */
  dispose(): boolean {
    for (const deferred of this.#pending) deferred.dispose();
    this.#pending.clear();
    try {
      this.#context.dispose();
      this.#runtime.dispose();
      return true;
    } catch {
      return false;
    }
  }
}

/** The first `script.js:<line>` of a stack, as `line N` of the script (the wrapper adds one line above it). */
function scriptLine(stack: string): string | undefined {
  const match = /script\.js:(\d+)/.exec(stack);
  if (!match) return undefined;
  const line = Number(match[1]) - 1;
  return line >= 1 ? `line ${line}` : undefined;
}
