import { type ChildProcess, spawn } from 'node:child_process';
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

/** True while a process with this pid exists (signal 0 only checks). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
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

/** A real `tack serve --http` on a free port for `configFile`, ready to take requests at `url`. */
export async function startTackServe(
  bin: string,
  configFile: string,
  env: Record<string, string | undefined>,
): Promise<Service & { url: string }> {
  const port = await freePort();
  const service = await startService(
    process.execPath,
    [bin, 'serve', '--http', String(port), '--config', configFile],
    {
      env,
      ready: /tack serve: .* at http/,
      timeoutMs: 30_000,
    },
  );
  return { ...service, url: `http://127.0.0.1:${port}/mcp` };
}
