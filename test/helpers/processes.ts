import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a server on a port found free, and on another when it was taken meanwhile: another test file (vitest
 * runs them in parallel) may bind the port between freePort() closing it and the server binding it. A server
 * that can take port 0 and say its address is better still (startTackServe).
 */
export async function onFreePort<T>(start: (port: number) => Promise<T>, attempts = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    try {
      return await start(port);
    } catch (error) {
      if (attempt >= attempts || !/EADDRINUSE|already in use|could not bind/i.test(String(error)))
        throw error;
    }
  }
}

/** True while a process with this pid exists (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A pid no process has: one that just exited (reused only after the pid space wraps). */
export function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

/** The pids a fixture appended to its `--pid-file`, one per line, in order. */
export function readPids(file: string): number[] {
  return readFileSync(file, 'utf8').trim().split('\n').map(Number);
}

export interface Service {
  process: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/** Starts a real server process and waits until its output matches `ready`. */
export async function startService(
  command: string,
  args: string[],
  options: { env?: Record<string, string | undefined>; cwd?: string; ready: RegExp; timeoutMs?: number },
): Promise<Service> {
  const child = spawn(command, args, {
    env: options.env ?? process.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGTERM');
    });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => {
      void stop();
      reject(
        new Error(
          `${command} ${args.join(' ')} not ready within ${options.timeoutMs ?? 15000} ms:\n${output}`,
        ),
      );
    }, options.timeoutMs ?? 15_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (options.ready.test(output)) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} exited with ${code} before it was ready:\n${output}`));
    });
  });
  return { process: child, output: () => output, stop };
}

/** The line `tack serve --http` prints once it listens, with the URL it listens at. */
export const SERVE_READY = /tack serve: [^\n]* at (http:\/\/[^\s]+)[^\n]*\n/;

/**
 * A real `tack serve --http` for `configFile`, ready to take requests at `url`. It binds port 0 and says where it
 * listens: no port found free first, which another test file could take before tack binds it.
 */
export async function startTackServe(
  bin: string,
  configFile: string,
  env: Record<string, string | undefined>,
): Promise<Service & { url: string }> {
  const service = await startService(
    process.execPath,
    [bin, 'serve', '--http', '127.0.0.1:0', '--config', configFile],
    { env, ready: SERVE_READY, timeoutMs: 30_000 },
  );
  return { ...service, url: SERVE_READY.exec(service.output())![1]! };
}
