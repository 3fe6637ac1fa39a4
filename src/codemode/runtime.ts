import { AsyncResource } from 'node:async_hooks';
import { Worker } from 'node:worker_threads';
import { errorMessage } from '../errors.js';
import type { ApiBinding } from './engine.js';
import {
  CpuClock,
  DEFAULT_SCRIPT_LIMITS,
  type LimitName,
  limitText,
  type ScriptLimits,
  sizeText,
  strippingText,
} from './limits.js';
import type { EngineData, FromEngine, ToEngine } from './worker.js';

export type { ApiBinding } from './engine.js';
export { DEFAULT_SCRIPT_LIMITS, type LimitName, type ScriptLimits } from './limits.js';

/**
 * Code mode's runtime as tack's main thread sees it: each script runs in the engine (engine.ts: QuickJS in
 * WebAssembly, no host object inside, JSON across) on a worker thread (worker.ts), never on the main thread, so a
 * busy script cannot stall tack's event loop (the TUI, Ctrl-C, the gateway's other clients). The engine checks
 * its limits itself (CPU, memory, stack, calls, output) and the thread is reused; when its CPU check comes too
 * late (a long built-in runs between two polls of the interpreter) or on the wall limit or an abort, this side
 * ends the thread at once and starts a fresh one for the next script. Each tool call a script makes crosses to
 * this thread as JSON text and runs through the caller's HostCall, so the caller's pipeline applies unchanged.
 * All work on a script's text happens on the engine's thread under the script's limits: a TypeScript script is
 * stripped of its types there (sucrase's work can double with each level of some nestings), and the length of
 * the text is checked here before it is sent.
 */

/** A script's text: JavaScript as it is, or TypeScript, which the engine's thread strips of its types first. */
export type ScriptCode = string | { typescript: string };

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

/** How far past the CPU limit the engine may run before this thread ends it (its own check usually comes first). */
const CPU_GRACE_MS = 100;
/** How often the CPU clock is read while the engine waits for tool calls (it may resume at any answer). */
const IDLE_POLL_MS = 50;
/** Scripts running at once; more wait for a thread (each engine's memory may grow to 256 MiB). */
const MAX_THREADS = 4;
/** Threads kept warm between scripts. */
const MAX_IDLE = 2;
/** A thread whose engine memory grew past this is ended after its script, which gives the memory back. */
const RETIRE_BYTES = 64 * 1024 * 1024;

/**
 * Runs `code` (the body of an async function: `await` the tools, `return` the result) against `binding`, each
 * tool call through `call`. Never throws for anything the script does; the outcome says what happened.
 */
export function runScript(
  code: ScriptCode,
  binding: ApiBinding,
  call: HostCall,
  limits: ScriptLimits = DEFAULT_SCRIPT_LIMITS,
  signal?: AbortSignal,
): Promise<ScriptOutcome> {
  return new ScriptRun(call, limits, signal).execute(code, binding);
}

/** Starts an engine thread ahead of the first script (its start and the engine's compile are most of the wait). */
export async function warmUp(): Promise<void> {
  let thread = idle[0];
  if (!thread) {
    if (live >= MAX_THREADS) return;
    const fresh = spawn();
    if (fresh instanceof Error) throw fresh;
    thread = fresh;
    idle.push(thread);
  }
  // Referenced while it starts, so a caller awaiting it keeps the process alive; at rest again after.
  const starting = thread;
  starting.worker.ref();
  await starting.ready.finally(() => {
    if (!starting.script) starting.worker.unref();
  });
}

/** One worker thread with its engine; runs one script at a time. */
class EngineThread {
  readonly clock = new CpuClock();
  readonly worker: Worker;
  /** Settles when the engine is compiled (or the thread failed). */
  readonly ready: Promise<void>;
  /** The script it runs now. */
  script: ScriptRun | undefined;
  /** Start another in its place when it exits (it was ended for a script, not broken). */
  replace = false;

  constructor() {
    this.worker = startWorker({ clock: this.clock.buffer });
    let ready = () => {};
    let failed = (_error: Error) => {};
    this.ready = new Promise<void>((resolve, reject) => {
      ready = resolve;
      failed = reject;
    });
    this.ready.catch(() => {}); // a failure is said by the script that runs on the thread
    this.worker.on('message', (message: FromEngine) => {
      if (message.type === 'ready') ready();
      else this.script?.message(message);
    });
    this.worker.on('error', (error) => {
      failed(error);
      this.script?.failed(errorMessage(error));
    });
    this.worker.on('exit', (code) => {
      failed(new Error(`the engine's thread exited (code ${code})`));
      this.script?.failed(`the engine's thread exited (code ${code})`);
      exited(this);
    });
  }

  post(message: ToEngine): void {
    this.worker.postMessage(message);
  }
}

/**
 * The engine thread's module: worker.js beside this file, or worker.ts through tsx when run from the sources. It
 * takes none of the process's Node flags (they are the CLI's: `--input-type` would even stop it loading).
 */
function startWorker(data: EngineData): Worker {
  const here = import.meta.url;
  const options = { workerData: data, execArgv: [] };
  if (here.endsWith('.ts')) {
    // Under tsx or vitest the sources are TypeScript, which a new thread cannot load by itself: it registers tsx.
    const tsx = import.meta.resolve('tsx/esm/api');
    const entry = new URL('./worker.ts', here).href;
    const boot = `import(${JSON.stringify(tsx)}).then((api) => { api.register(); return import(${JSON.stringify(entry)}); });`;
    return new Worker(boot, { ...options, eval: true });
  }
  return new Worker(new URL('./worker.js', here), options);
}

// The pool: threads at rest (unref'd, so they never keep tack running), the live count, scripts waiting for one.
const idle: EngineThread[] = [];
const waiting: Array<(thread: EngineThread | Error) => void> = [];
let live = 0;

/**
 * A new thread, or why none could be started (tsx missing when run from the sources, a broken install): an error
 * the script's outcome says, never a throw out of an event handler (exited() spawns from one).
 */
function spawn(): EngineThread | Error {
  try {
    const thread = new EngineThread();
    live++;
    return thread;
  } catch (error) {
    return error instanceof Error ? error : new Error(String(error));
  }
}

/**
 * A thread for a script: one at rest, a new one, or the next to come free (undefined if `signal` ends first; an
 * Error when no thread could be started).
 */
function take(signal: AbortSignal): Promise<EngineThread | Error | undefined> {
  const thread = idle.pop() ?? (live < MAX_THREADS ? spawn() : undefined);
  if (thread) {
    if (!(thread instanceof Error)) thread.worker.ref();
    return Promise.resolve(thread);
  }
  return new Promise((resolve) => {
    const serve = (next: EngineThread | Error) => {
      signal.removeEventListener('abort', cancel);
      if (!(next instanceof Error)) next.worker.ref();
      resolve(next);
    };
    const cancel = () => {
      waiting.splice(waiting.indexOf(serve), 1);
      resolve(undefined);
    };
    waiting.push(serve);
    signal.addEventListener('abort', cancel, { once: true });
  });
}

/** A thread whose script ended normally: to a waiting script, to rest, or ended if enough rest. */
function give(thread: EngineThread): void {
  const next = waiting.shift();
  if (next) next(thread);
  else if (idle.length < MAX_IDLE) rest(thread);
  else end(thread, false);
}

function rest(thread: EngineThread): void {
  thread.worker.unref();
  idle.push(thread);
}

/** Ends a thread now (whatever it runs); its memory goes with it. */
function end(thread: EngineThread, replace: boolean): void {
  thread.replace = replace;
  thread.worker.terminate().catch(() => {});
}

/** A thread is gone: a waiting script gets a new one, or one is kept warm in place of a thread ended for a script. */
function exited(thread: EngineThread): void {
  live--;
  const at = idle.indexOf(thread);
  if (at >= 0) idle.splice(at, 1);
  const next = waiting.shift();
  if (next) next(spawn());
  else if (thread.replace && idle.length === 0) {
    const fresh = spawn();
    if (!(fresh instanceof Error)) rest(fresh);
  }
}

/** One script, as the main thread follows it. */
class ScriptRun {
  readonly #call: HostCall;
  readonly #limits: ScriptLimits;
  readonly #outer: AbortSignal | undefined;
  /** Ends the calls in flight (and the wait for a thread) when the script ends. */
  readonly #stop = new AbortController();
  readonly #logs: string[] = [];
  #truncated = false;
  #calls = 0;
  #thread: EngineThread | undefined;
  #wall: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #ended = false;
  /** A TypeScript script whose types are not stripped yet: a limit reached now is said as stripping's. */
  #stripping = false;
  #resolve: (outcome: ScriptOutcome) => void = () => {};
  readonly #onAbort = () => this.#kill(undefined);
  /**
   * The caller's async context: the script's tool calls arrive as thread messages, outside it, and would lose
   * what the caller's context carries (the active span, so they nest under `execute_tool run_code`).
   */
  readonly #scope = new AsyncResource('tack.codemode.script');

  constructor(call: HostCall, limits: ScriptLimits, signal: AbortSignal | undefined) {
    this.#call = call;
    this.#limits = limits;
    this.#outer = signal;
  }

  execute(code: ScriptCode, binding: ApiBinding): Promise<ScriptOutcome> {
    if (this.#outer?.aborted)
      return Promise.resolve(this.#outcome('aborted', { error: 'interrupted before it started' }));
    const typescript = typeof code !== 'string';
    const text = typeof code === 'string' ? code : code.typescript;
    if (text.length > this.#limits.maxCodeChars)
      return Promise.resolve(
        this.#outcome('limit', { limit: 'size', error: sizeText(this.#limits, text.length) }),
      );
    this.#stripping = typescript;
    const outcome = new Promise<ScriptOutcome>((resolve) => {
      this.#resolve = resolve;
    });
    this.#wall = setTimeout(() => this.#kill('wall'), this.#limits.wallMs);
    this.#outer?.addEventListener('abort', this.#onAbort, { once: true });
    void take(this.#stop.signal).then((thread) => {
      if (!thread) return;
      if (thread instanceof Error) {
        this.#end(this.#outcome('error', { error: `the runtime failed: ${thread.message}` }), 'gone');
        return;
      }
      if (this.#ended) {
        give(thread);
        return;
      }
      this.#thread = thread;
      thread.script = this;
      thread.clock.reset();
      thread.post({ type: 'run', code: text, typescript, binding, limits: this.#limits });
      this.#watch(thread.clock);
    });
    return outcome;
  }

  /** A message of the engine's thread about this script. */
  message(message: FromEngine): void {
    if (message.type === 'stripped') this.#stripping = false;
    else if (message.type === 'call') {
      this.#calls++;
      this.#forward(message.id, message.target, message.json);
    } else if (message.type === 'log') {
      this.#logs.push(message.line);
      if (message.cut) this.#truncated = true;
    } else if (message.type === 'done') {
      const keep = message.healthy && message.memoryBytes <= RETIRE_BYTES;
      this.#end({ ...message.outcome, logs: this.#logs }, keep ? 'give' : 'end');
    }
  }

  /** The thread failed (it threw outside the engine, or exited). */
  failed(message: string): void {
    this.#end(this.#outcome('error', { error: `the runtime failed: ${message}` }), 'gone');
  }

  /** Runs a tool call of the script through the caller's HostCall, and answers the engine. */
  #forward(id: number, target: string, json: string): void {
    const answer = (result: { ok: true; json: string } | { ok: false; error: string }) => {
      if (!this.#ended) this.#thread?.post({ type: 'answer', id, ...result });
    };
    // Through a promise, so a HostCall that throws at once is an error the script sees, not an uncaught one here.
    Promise.resolve()
      .then(() =>
        this.#scope.runInAsyncScope(this.#call, undefined, target, JSON.parse(json), this.#stop.signal),
      )
      .then(
        (result) => {
          if (!result.ok) return answer(result);
          try {
            answer({ ok: true, json: JSON.stringify(result.value ?? null) ?? 'null' });
          } catch (error) {
            answer({ ok: false, error: `${target}: its result is not JSON (${errorMessage(error)})` });
          }
        },
        (error: unknown) => answer({ ok: false, error: errorMessage(error) }),
      );
  }

  /**
   * The main thread's own CPU check: the engine's interrupt handler runs between operations, so a long built-in
   * (sorting a huge array) can pass the limit by seconds; past it and a grace, the thread is ended.
   */
  #watch(clock: CpuClock): void {
    const budget = this.#limits.cpuMs + CPU_GRACE_MS;
    const used = clock.usedMs();
    if (used > budget) {
      this.#kill('cpu');
      return;
    }
    const next = clock.running() ? Math.max(1, Math.ceil(budget - used)) : IDLE_POLL_MS;
    this.#watchdog = setTimeout(() => this.#watch(clock), next);
  }

  /** Ends the script at once: a limit (`cpu`, `wall`) or, with none, an abort. */
  #kill(limit: 'cpu' | 'wall' | undefined): void {
    if (!limit) {
      this.#end(this.#outcome('aborted', { error: 'interrupted' }), 'end');
      return;
    }
    const error = this.#stripping ? strippingText(this.#limits, limit) : limitText(this.#limits, limit);
    this.#end(this.#outcome('limit', { limit, error }), 'end');
  }

  /** `give`: the thread goes back to the pool; `end`: it is ended and replaced; `gone`: it failed by itself. */
  #end(outcome: ScriptOutcome, thread: 'give' | 'end' | 'gone'): void {
    if (this.#ended) return;
    this.#ended = true;
    clearTimeout(this.#wall);
    clearTimeout(this.#watchdog);
    this.#outer?.removeEventListener('abort', this.#onAbort);
    this.#stop.abort();
    const current = this.#thread;
    if (current) {
      current.script = undefined;
      if (thread === 'give') give(current);
      else end(current, thread === 'end');
    }
    this.#resolve(outcome);
  }

  #outcome(status: ScriptOutcome['status'], extra: { error?: string; limit?: LimitName }): ScriptOutcome {
    return {
      status,
      ...extra,
      logs: this.#logs,
      truncated: this.#truncated,
      calls: Math.min(this.#calls, this.#limits.maxCalls),
      cpuMs: Math.round(this.#thread?.clock.usedMs() ?? 0),
    };
  }
}
