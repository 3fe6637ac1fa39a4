import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect } from 'vitest';
import { REPO } from './project.js';

export const BIN = join(REPO, 'bin', 'tack.js');

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real `tack` executable, as a user would. */
export function tack(
  args: string[],
  options: { cwd: string; env?: Record<string, string | undefined> },
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [BIN, ...args],
      { cwd: options.cwd, env: options.env ?? process.env },
      (error, stdout, stderr) => {
        resolve({ code: error ? ((error as { code?: number }).code ?? 1) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * The real `tack` with `input` piped to its stdin (not a terminal), as `printf ... | tack chat --plain` runs it;
 * `defer` gets the function that kills it, for the test's cleanup.
 */
export function tackPiped(
  args: string[],
  input: string,
  options: { cwd: string; env: Record<string, string | undefined>; defer: (kill: () => void) => void },
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      cwd: options.cwd,
      env: options.env,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    options.defer(() => {
      child.kill('SIGKILL');
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.once('exit', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}

/** A `tack` process in a real pseudo-terminal (`script`), typed into as a person would. */
export interface PtySession {
  child: ChildProcess;
  readonly output: string;
  /** Waits (up to 20 s) until the output shows `text`, then asserts it does. */
  waitFor(text: string | RegExp): Promise<void>;
  /** Types a line and Enter. */
  type(line: string): void;
  /** Resolves with the exit code. */
  exited(): Promise<number | null>;
}

export function ptyTack(
  args: string[],
  options: { cwd: string; env: Record<string, string | undefined>; onStart?: (kill: () => void) => void },
): PtySession {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a}'`).join(' ');
  const child = spawn('script', ['-qfec', command, '/dev/null'], {
    cwd: options.cwd,
    env: options.env,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  options.onStart?.(() => child.kill('SIGKILL'));
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return {
    child,
    get output() {
      return output;
    },
    async waitFor(text) {
      const seen = () => (typeof text === 'string' ? output.includes(text) : text.test(output));
      const deadline = Date.now() + 20_000;
      while (!seen() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
      expect(output).toMatch(text);
    },
    type(line) {
      child.stdin?.write(`${line}\r`);
    },
    exited: () => new Promise((resolve) => child.once('exit', (code) => resolve(code))),
  };
}
