import { parentPort, workerData } from 'node:worker_threads';
import { errorMessage } from '../errors.js';
import { type ApiBinding, type EngineAnswer, type EngineOutcome, loadEngine, ScriptRun } from './engine.js';
import { CpuClock, type ScriptLimits } from './limits.js';

/**
 * The code-mode engine's thread: one script at a time, started by runtime.ts on tack's main thread, which may
 * end the thread at any moment (a limit the engine's own checks would see too late, an abort). Tool calls and
 * console lines go to the main thread as messages; answers come back as JSON text. A TypeScript script is
 * stripped of its types here too, on the script's CPU clock, so its limits and an abort cover that work as well.
 */

/** From the main thread. */
export type ToEngine =
  | { type: 'run'; code: string; typescript: boolean; binding: ApiBinding; limits: ScriptLimits }
  | ({ type: 'answer'; id: number } & EngineAnswer);

/** To the main thread. */
export type FromEngine =
  | { type: 'ready' }
  /** A TypeScript script's types are stripped: what runs now is the engine. */
  | { type: 'stripped' }
  | { type: 'call'; id: number; target: string; json: string }
  | { type: 'log'; line: string; cut: boolean }
  /** `healthy`: the thread may run another script; `memoryBytes`: what its engine's memory grew to. */
  | { type: 'done'; outcome: EngineOutcome; healthy: boolean; memoryBytes: number };

/** What runtime.ts hands a new thread. */
export interface EngineData {
  clock: SharedArrayBuffer;
}

const port = parentPort;
if (!port) throw new Error('codemode/worker.ts runs as a worker thread (runtime.ts starts it)');
const send = (message: FromEngine) => port.postMessage(message);
const clock = new CpuClock((workerData as EngineData).clock);
const engine = loadEngine();
// Ready either way, so warmUp() never waits on an engine that failed to load: that failure is said by the first
// script's outcome.
engine.then(
  () => send({ type: 'ready' }),
  () => send({ type: 'ready' }),
);

/** Calls in flight, by id; ids are never reused, so an answer to an earlier script finds nothing. */
const answers = new Map<number, (answer: EngineAnswer) => void>();
let nextId = 0;

port.on('message', (message: ToEngine) => {
  if (message.type === 'answer') {
    answers.get(message.id)?.(message);
    answers.delete(message.id);
  } else void run(message.code, message.typescript, message.binding, message.limits);
});

/** sucrase, loaded by the first TypeScript script only (JavaScript needs none of it). */
let strip: Promise<typeof import('./strip.js')> | undefined;

async function run(
  code: string,
  typescript: boolean,
  binding: ApiBinding,
  limits: ScriptLimits,
): Promise<void> {
  let loaded: Awaited<typeof engine>;
  try {
    loaded = await engine;
  } catch (error) {
    const outcome = { status: 'error' as const, truncated: false, calls: 0, cpuMs: 0 };
    send({
      type: 'done',
      outcome: { ...outcome, error: `the runtime did not start: ${errorMessage(error)}` },
      healthy: false,
      memoryBytes: 0,
    });
    return;
  }
  const script = new ScriptRun(
    loaded.module,
    binding,
    {
      call: (target, json) =>
        new Promise((resolve) => {
          const id = nextId++;
          answers.set(id, resolve);
          send({ type: 'call', id, target, json });
        }),
      log: (line, cut) => send({ type: 'log', line, cut }),
    },
    limits,
    clock,
  );
  let outcome: EngineOutcome;
  const stripped = typescript ? await stripTypes(code) : { code };
  if ('error' in stripped) {
    outcome = {
      status: 'error',
      error: stripped.error,
      truncated: false,
      calls: 0,
      cpuMs: Math.round(clock.usedMs()),
    };
  } else {
    if (typescript) send({ type: 'stripped' });
    outcome = await script.execute(stripped.code);
  }
  const healthy = script.dispose();
  answers.clear();
  send({ type: 'done', outcome, healthy, memoryBytes: loaded.memoryBytes() });
}

/**
 * The script's types stripped, on its CPU clock (the ScriptRun made just before reset it): the main thread ends
 * this thread when the stripping passes the CPU or wall limit, as it would end a busy script.
 */
async function stripTypes(code: string): Promise<{ code: string } | { error: string }> {
  try {
    strip ??= import('./strip.js');
    const { stripTypes } = await strip;
    clock.start();
    try {
      return stripTypes(code);
    } finally {
      clock.stop();
    }
  } catch (error) {
    strip = undefined;
    return { error: `TypeScript: the type stripper did not load: ${errorMessage(error)}` };
  }
}
