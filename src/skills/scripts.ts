import { extname, join } from 'node:path';
import { getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { describeNetwork, type SandboxPolicy } from '../config/sandbox.js';
import { TackError } from '../errors.js';
import { prepareLaunch, type SandboxStatus } from '../sandbox/launch.js';
import { type CappedRunResult, runCapped } from '../util/run-capped.js';
import { resolveInside } from './inside-skill.js';
import type { SkillEntry } from './library.js';

/** What the harness is asked before a script runs: everything the user needs to decide, nothing hidden. */
export interface ScriptApprovalRequest {
  skill: string;
  /** As the model asked for it, relative to scripts/. */
  script: string;
  args: readonly string[];
  /** The exact argv that will run (inside its sandbox, when it has one). */
  command: readonly string[];
  cwd: string;
  /** The sandbox it runs in, in words: `workspace-write, no network`, or `none`. */
  sandbox: string;
}

/** Says yes or no to one script run. Without one, no script runs: running code is never a silent default. */
export type ApproveScript = (request: ScriptApprovalRequest) => boolean | Promise<boolean>;

/** Who approves a script, its timeout, output cap, environment and sandbox. */
export interface RunScriptOptions {
  approve?: ApproveScript;
  /** Default 60 s; the whole process group is killed when it passes. */
  timeoutMs?: number;
  /** Bytes kept of stdout and of stderr each (default 32 KiB); the rest is counted, not kept. */
  maxOutputBytes?: number;
  /** Added to the safe environment (the SDK's default: PATH, HOME, USER, SHELL, TERM, LOGNAME). */
  env?: Record<string, string>;
  signal?: AbortSignal;
  /**
   * The sandbox the script runs in (tack.json `sandbox.skillScripts`, resolved; the harness and `tack skills run`
   * pass the configuration's). Absent: none.
   */
  sandbox?: SandboxPolicy | undefined;
}

/** What a script run returns: exit status, capped output, what was dropped, how long it took, its sandbox. */
export type ScriptResult = Omit<CappedRunResult, 'spawnError'> & {
  sandbox?: SandboxStatus;
  /** What the sandbox refused, explained with its rule (from the script's stderr and the proxy's decisions). */
  sandboxNotes?: string[];
};

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
  const policy = options.sandbox;
  const request: ScriptApprovalRequest = {
    skill: skill.name,
    script,
    args,
    command,
    cwd: skill.dir,
    sandbox: policy ? `${policy.profile}, ${describeNetwork(policy.network)}` : 'none',
  };
  if (!options.approve) {
    throw new TackError('SKILL_SCRIPT', `skill '${skill.name}': running ${script} needs approval`, {
      hint: 'Pass an approve callback (the harness asks the user); no script runs without one.',
    });
  }
  if (!(await options.approve(request))) {
    throw new TackError('SKILL_SCRIPT', `skill '${skill.name}': running ${script} was not approved`);
  }
  return spawnCapped(command, skill, script, options);
}

async function spawnCapped(
  command: readonly string[],
  skill: SkillEntry,
  script: string,
  options: RunScriptOptions,
): Promise<ScriptResult> {
  const notes: string[] = [];
  const policy = options.sandbox;
  // A required sandbox this platform cannot give is thrown (SANDBOX_UNAVAILABLE) before anything runs.
  const launch = await prepareLaunch(policy, {
    command: command[0]!,
    args: command.slice(1),
    env: { ...getDefaultEnvironment(), ...options.env },
    cwd: skill.dir,
    readPaths: [{ path: skill.dir, rule: `the skill's own folder (${skill.name})` }],
    ...(policy ? { stateDir: join(policy.stateDir, safeName(skill.name)) } : {}),
    subject: `skill script ${skill.name}/${script}`,
    note: (message) => notes.push(message),
  });
  let run: CappedRunResult;
  try {
    run = await runCapped([launch.command, ...launch.args], {
      cwd: launch.cwd,
      env: launch.env,
      timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS,
      maxOutputBytes: options.maxOutputBytes ?? DEFAULT_MAX_OUTPUT,
      signal: options.signal,
    });
  } finally {
    await launch.close();
  }
  const explained = new Set<string>();
  for (const line of run.stderr.split('\n'))
    for (const refusal of launch.explain(line))
      if (!explained.has(refusal.subject)) {
        explained.add(refusal.subject);
        notes.push(refusal.message);
      }
  const error = run.spawnError;
  if (error)
    throw new TackError(
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
    );
  const { spawnError: _none, ...result } = run;
  return {
    ...result,
    ...(launch.status.state !== 'none' ? { sandbox: launch.status } : {}),
    ...(notes.length > 0 ? { sandboxNotes: notes } : {}),
  };
}

/** A skill's name as a folder name: front matter is not always valid, and must not climb out of the state folder. */
function safeName(name: string): string {
  const safe = name.replace(/[^A-Za-z0-9._-]/g, '_');
  return safe === '' || safe === '.' || safe === '..' ? '_' : safe;
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
    ...(result.sandboxNotes ?? []).map((note) => `[${note}]`),
  ].join('\n');
}
