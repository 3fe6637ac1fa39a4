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
import { type CpuClock, type LimitName, limitText, type ScriptLimits } from './limits.js';

/**
 * The isolated engine of code mode: a script runs in QuickJS compiled to WebAssembly (quickjs-emscripten), a
 * separate JavaScript engine with its own heap inside one linear memory. The script sees the language's own
 * globals, `console` and the `mcp` object, nothing else: no `require`, `process`, `fetch`, timers, module loader,
 * file system or network exist in it, and no host object crosses into it (tool arguments and results cross as
 * JSON strings only). node:vm was not an option: it shares the host's heap and object graph, and its own docs
 * say it is not a security mechanism.
 *
 * This module runs in a worker thread (worker.ts), never on tack's main thread (runtime.ts), which stops the
 * thread outright when the engine's own checks come too late. Limits checked here, each ending the script with an
 * error result the model can act on: CPU time inside the engine (the interrupt handler, polled by the
 * interpreter), memory (QuickJS's allocator limit), stack depth (QuickJS's own check, set well under the thread's
 * stack so a deep recursion is a JavaScript error, not a crash), the number of tool calls and the output size.
 */

/**
 * The tool API a script gets: `mcp.<server>.<tool>`, by the identifiers the declarations use, to the name the
 * call is made under (the catalog's `mcp__server__tool`).
 */
export type ApiBinding = Readonly<Record<string, Readonly<Record<string, string>>>>;

/** What a tool call gave the script, as it crosses threads: the value as JSON text, or an error it can catch. */
export type EngineAnswer = { ok: true; json: string } | { ok: false; error: string };

/** What the engine needs of its thread: tool calls and console lines go out, answers come back. */
export interface EngineHost {
  call(target: string, json: string): Promise<EngineAnswer>;
  /** A console line the output limit let through; `cut` when it was cut there. */
  log(line: string, cut: boolean): void;
}

/** A script's outcome but its console lines, which went out one by one through `EngineHost.log`. */
export interface EngineOutcome {
  status: 'ok' | 'error' | 'limit';
  value?: string;
  truncated: boolean;
  error?: string;
  limit?: LimitName;
  calls: number;
  cpuMs: number;
}

/** 64 KiB pages: 256 MiB, the most the engine's memory may grow to (the heap limit of a script is below it). */
const MAX_WASM_PAGES = 4096;

// The package's types are CommonJS-shaped; its ESM build's default export is the variant itself.
const variant = releaseSync as unknown as QuickJSSyncVariant;

/** Node's WebAssembly global (tack's `lib` setting leaves the DOM types, and with them its declaration, out). */
const { WebAssembly: wasm } = globalThis as unknown as {
  WebAssembly: {
    Memory: new (descriptor: { initial: number; maximum: number }) => { buffer: { byteLength: number } };
  };
};

/** The compiled engine and its memory, whose size says how much of the process the thread holds. */
export interface Engine {
  module: QuickJSWASMModule;
  memoryBytes(): number;
}

/** Compiles the engine (the bulk of a thread's start-up); every script of the thread gets its own runtime in it. */
export async function loadEngine(): Promise<Engine> {
  // The engine's own limit does not count every allocation (measured: a loop of `new Array(1e6).fill(1)` under a
  // 64 MiB limit grew the linear memory to 2 GB, which WebAssembly never gives back); a memory with a maximum
  // bounds what any script can take, whatever the allocator does. It is freed with the thread.
  const memory = new wasm.Memory({ initial: 256, maximum: MAX_WASM_PAGES });
  const module = await newQuickJSWASMModuleFromVariant(newVariant(variant, { wasmMemory: memory as never }));
  return { module, memoryBytes: () => memory.buffer.byteLength };
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
 * One script in the engine: `code` (the body of an async function: `await` the tools, `return` the result)
 * against `binding`, each tool call through `host`. `execute` never throws for anything the script does; the
 * outcome says what happened.
 */
export class ScriptRun {
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #binding: ApiBinding;
  readonly #host: EngineHost;
  readonly #limits: ScriptLimits;
  readonly #clock: CpuClock;
  #outputChars = 0;
  #truncated = false;
  #limit: LimitName | undefined;
  #calls = 0;
  readonly #pending = new Set<QuickJSDeferredPromise>();
  /** Resolved whenever a call settles, so the driver runs the engine's jobs. */
  #wake: () => void = () => {};

  constructor(
    module: QuickJSWASMModule,
    binding: ApiBinding,
    host: EngineHost,
    limits: ScriptLimits,
    clock: CpuClock,
  ) {
    this.#binding = binding;
    this.#host = host;
    this.#limits = limits;
    this.#clock = clock;
    clock.reset();
    this.#runtime = module.newRuntime();
    this.#runtime.setMemoryLimit(limits.memoryBytes);
    this.#runtime.setMaxStackSize(limits.stackBytes);
    this.#runtime.setInterruptHandler(() => this.#shouldInterrupt());
    this.#context = this.#runtime.newContext();
  }

  async execute(code: string): Promise<EngineOutcome> {
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
      // A trap inside the engine (a stack overflow of the thread, an abort): the thread is replaced after it.
      this.#limit ??= /stack/i.test(errorMessage(error)) ? 'stack' : undefined;
      return this.#limit
        ? this.#outcome('limit', { error: limitText(this.#limits, this.#limit) })
        : this.#outcome('error', { error: `the runtime failed: ${errorMessage(error)}` });
    }
  }

  /** Runs the engine's jobs until the script's promise settles, waiting for tool calls in between. */
  async #drive(promise: QuickJSHandle): Promise<EngineOutcome> {
    for (;;) {
      const jobs = this.#timed(() => this.#runtime.executePendingJobs());
      if (jobs.error) {
        const message = this.#dumpError(jobs.error);
        if (this.#limit) return this.#stopped(this.#limit);
        return this.#failed(message);
      }
      if (this.#limit) return this.#stopped(this.#limit);
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
        this.#reject(deferred, limitText(this.#limits, 'calls'));
        return deferred.handle;
      }
      this.#pending.add(deferred);
      this.#host.call(target, json).then(
        (answer) => {
          if (!this.#pending.delete(deferred)) return;
          if (answer.ok) {
            const text = context.newString(answer.json);
            deferred.resolve(text);
            text.dispose();
          } else this.#reject(deferred, answer.error);
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
      this.#truncated = true;
      this.#outputChars = this.#limits.maxOutputChars;
      this.#host.log(`${line.slice(0, Math.max(0, room))}…`, true);
      return;
    }
    this.#outputChars += line.length + 1;
    this.#host.log(line, false);
  }

  #capValue(text: string): string {
    const room = Math.max(0, this.#limits.maxOutputChars - this.#outputChars);
    if (text.length <= room) return text;
    this.#truncated = true;
    return `${text.slice(0, room)}…`;
  }

  /** Runs engine work, counting its time toward the CPU limit (on the clock the main thread reads too). */
  #timed<T>(work: () => T): T {
    this.#clock.start();
    try {
      return work();
    } finally {
      this.#clock.stop();
    }
  }

  #shouldInterrupt(): boolean {
    if (!this.#limit && this.#clock.usedMs() > this.#limits.cpuMs) this.#limit = 'cpu';
    return this.#limit !== undefined;
  }

  #stopped(limit: LimitName): EngineOutcome {
    return this.#outcome('limit', { error: limitText(this.#limits, limit) });
  }

  /** The script threw: a limit the engine reports as an error (memory, stack) is named as one. */
  #failed(message: string): EngineOutcome {
    if (this.#limit) return this.#stopped(this.#limit);
    if (/out of memory/i.test(message)) {
      this.#limit = 'memory';
      return this.#stopped('memory');
    }
    if (/stack overflow/i.test(message)) {
      this.#limit = 'stack';
      return this.#stopped('stack');
    }
    return this.#outcome('error', { error: message });
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

  #outcome(status: EngineOutcome['status'], extra: { value?: string; error?: string }): EngineOutcome {
    return {
      status,
      ...extra,
      truncated: this.#truncated,
      ...(this.#limit && status === 'limit' ? { limit: this.#limit } : {}),
      calls: Math.min(this.#calls, this.#limits.maxCalls),
      cpuMs: Math.round(this.#clock.usedMs()),
    };
  }

  /** Frees the script's runtime; false when it could not be freed cleanly (the thread is then replaced). */
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
