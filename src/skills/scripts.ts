import { spawn } from 'node:child_process';
import { extname } from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { TackError } from '../errors.js';
import type { SkillEntry } from './library.js';
import { resolveInside } from './paths.js';

/** What the harness is asked before a script runs: everything the user needs to decide, nothing hidden. */
export interface ScriptApprovalRequest {
  skill: string;
  /** As the model asked for it, relative to scripts/. */
  script: string;
  args: readonly string[];
  /** The exact argv that will run. */
  command: readonly string[];
  cwd: string;
}

/** Says yes or no to one script run. Without one, no script runs: running code is never a silent default. */
export type ApproveScript = (request: ScriptApprovalRequest) => boolean | Promise<boolean>;

export interface RunScriptOptions {
  approve?: ApproveScript;
  /** Default 60 s; the whole process group is killed when it passes. */
  timeoutMs?: number;
  /** Bytes kept of stdout and of stderr each (default 32 KiB); the rest is counted, not kept. */
  maxOutputBytes?: number;
  /** Added to the safe environment (the SDK's default: PATH, HOME, USER, SHELL, TERM, LOGNAME). */
  env?: Record<string, string>;
  signal?: AbortSignal;
}

export interface ScriptResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  stdout: string;
  stderr: string;
  /** Bytes that were produced but not kept. */
  droppedBytes: number;
  durationMs: number;
}

const DEFAULT_TIMEOUT_MS = 60_000;
const DEFAULT_MAX_OUTPUT = 32 * 1024;

/** Interpreters by extension. A script without a known extension must be executable and is run directly. */
const INTERPRETERS: Record<string, readonly string[]> = {
  '.py': ['python3'],
  '.sh': ['bash'],
  '.bash': ['bash'],
  '.js': [process.execPath],
  '.mjs': [process.execPath],
  '.cjs': [process.execPath],
  '.rb': ['ruby'],
  '.pl': ['perl'],
};

/**
 * Tier 3: runs `scripts/<script>` of the skill with `args` (never through a shell), in the skill's folder, with
 * the safe environment, after approval, within a timeout. The model gets its output, never its source.
 */
export async function runSkillScript(
  skill: SkillEntry,
  script: string,
  args: readonly string[] = [],
  options: RunScriptOptions = {},
): Promise<ScriptResult> {
  if (skill.remote) {
    throw new TackError(
      'SKILL_SCRIPT',
      `skill '${skill.name}' comes from a server: its scripts are not run here`,
      {
        hint: 'Read the script with read_skill_file, or run it on the server that serves the skill.',
      },
    );
  }
  const path = await resolveInside(skill, script.replace(/^scripts\//, ''), 'scripts');
  const ext = extname(path).toLowerCase();
  const command = [...(INTERPRETERS[ext] ?? []), path, ...args];
  const request: ScriptApprovalRequest = { skill: skill.name, script, args, command, cwd: skill.dir };
  if (!options.approve) {
    throw new TackError('SKILL_SCRIPT', `skill '${skill.name}': running ${script} needs approval`, {
      hint: 'Pass an approve callback (the harness asks the user); no script runs without one.',
    });
  }
  if (!(await options.approve(request))) {
    throw new TackError('SKILL_SCRIPT', `skill '${skill.name}': running ${script} was not approved`);
  }
  return spawnCapped(command, skill, options);
}

function spawnCapped(
  command: readonly string[],
  skill: SkillEntry,
  options: RunScriptOptions,
): Promise<ScriptResult> {
  const max = options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT;
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const child = spawn(command[0]!, command.slice(1), {
      cwd: skill.dir,
      env: { ...getDefaultEnvironment(), ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      // Its own process group, so a timeout kills what the script started too.
      detached: process.platform !== 'win32',
    });
    const out = {
      stdout: [] as Buffer[],
      stderr: [] as Buffer[],
      kept: { stdout: 0, stderr: 0 },
      dropped: 0,
    };
    const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const keep = Math.max(0, Math.min(chunk.length, max - out.kept[stream]));
      if (keep) out[stream].push(chunk.subarray(0, keep));
      out.kept[stream] += keep;
      out.dropped += chunk.length - keep;
    };
    child.stdout.on('data', collect('stdout'));
    child.stderr.on('data', collect('stderr'));
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
    }, options.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const onAbort = () => kill();
    options.signal?.addEventListener('abort', onAbort, { once: true });
    child.once('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      reject(
        new TackError(
          'SKILL_SCRIPT',
          `skill '${skill.name}': could not start ${command[0]}: ${error.message}`,
          {
            hint:
              error.code === 'ENOENT'
                ? `Install ${command[0]}, or make the script executable with a #! line.`
                : error.code === 'EACCES'
                  ? 'Make the script executable (chmod +x) or give it a known extension (.py, .sh, .js, .rb, .pl).'
                  : undefined,
          },
        ),
      );
    });
    child.once('close', (exitCode, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode,
        signal,
        timedOut,
        stdout: Buffer.concat(out.stdout).toString('utf8'),
        stderr: Buffer.concat(out.stderr).toString('utf8'),
        droppedBytes: out.dropped,
        durationMs: Math.round(performance.now() - started),
      });
    });
  });
}

/** The result as the model reads it: exit status first, then output, and what was cut. */
export function formatScriptResult(script: string, result: ScriptResult): string {
  const status = result.timedOut
    ? 'timed out and was killed'
    : result.signal
      ? `was killed by ${result.signal}`
      : `exited with code ${result.exitCode}`;
  return [
    `${script} ${status} after ${result.durationMs} ms.`,
    ...(result.stdout ? ['<stdout>', result.stdout.trimEnd(), '</stdout>'] : []),
    ...(result.stderr ? ['<stderr>', result.stderr.trimEnd(), '</stderr>'] : []),
    ...(result.droppedBytes ? [`[${result.droppedBytes} more bytes of output not shown]`] : []),
  ].join('\n');
}
