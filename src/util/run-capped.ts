import { spawn } from 'node:child_process';

export interface CappedRunOptions {
  cwd: string;
  env: Record<string, string>;
  /** Written to stdin, which is then closed; absent: stdin is closed at once. */
  input?: string;
  timeoutMs: number;
  /** Bytes kept of stdout and of stderr each; the rest is counted, not kept. */
  maxOutputBytes: number;
  signal?: AbortSignal | undefined;
}

export interface CappedRunResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Bytes of output past the cap, not kept. */
  droppedBytes: number;
  durationMs: number;
  /** The process could not be started (ENOENT, EACCES...). */
  spawnError?: NodeJS.ErrnoException;
}

/**
 * Runs a command (argv, no shell unless argv says so) the way tack runs code it did not write: in its own process
 * group, so a timeout or an abort kills whatever it started too; output capped so a flood cannot exhaust memory.
 * Skill scripts and hooks both run through here. Never rejects: a failure to start is `spawnError`.
 */
export function runCapped(argv: readonly string[], options: CappedRunOptions): Promise<CappedRunResult> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
      detached: process.platform !== 'win32',
    });
    const kept = { stdout: [] as Buffer[], stderr: [] as Buffer[] };
    const size = { stdout: 0, stderr: 0 };
    let dropped = 0;
    const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const keep = Math.max(0, Math.min(chunk.length, options.maxOutputBytes - size[stream]));
      if (keep) kept[stream].push(chunk.subarray(0, keep));
      size[stream] += keep;
      dropped += chunk.length - keep;
    };
    child.stdout?.on('data', collect('stdout'));
    child.stderr?.on('data', collect('stderr'));
    if (child.stdin) {
      // A command that never reads stdin and exits first closes the pipe under us: its right, not an error.
      child.stdin.on('error', () => {});
      child.stdin.end(options.input);
    }
    let timedOut = false;
    const kill = () => {
      try {
        if (child.pid && process.platform !== 'win32') process.kill(-child.pid, 'SIGKILL');
        else child.kill('SIGKILL');
      } catch {
        // Already gone.
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      kill();
    }, options.timeoutMs);
    options.signal?.addEventListener('abort', kill, { once: true });
    let done = false;
    const finish = (partial: Partial<CappedRunResult>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', kill);
      resolve({
        exitCode: null,
        signal: null,
        timedOut,
        stdout: Buffer.concat(kept.stdout).toString('utf8'),
        stderr: Buffer.concat(kept.stderr).toString('utf8'),
        droppedBytes: dropped,
        durationMs: Math.round(performance.now() - started),
        ...partial,
      });
    };
    child.once('error', (error: NodeJS.ErrnoException) => finish({ spawnError: error }));
    child.once('close', (exitCode, signal) => finish({ exitCode, signal }));
  });
}
