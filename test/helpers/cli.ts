import { execFile } from 'node:child_process';
import { join } from 'node:path';
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
