import { closeSync, mkdirSync, mkdtempSync, openSync, readSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import type { SandboxPolicy } from '../config/sandbox.js';
import { errorMessage, TackError } from '../errors.js';
import { printable } from '../util/printable.js';
import { explainLine, type Refusal } from './explain.js';
import { FORWARDER, FORWARDER_PORT } from './forwarder.js';
import { guaranteesOf, type SandboxGuarantees } from './guarantees.js';
import {
  type BindRefusal,
  boundIdentities,
  bwrapArgs,
  identityCheck,
  type MountPlan,
  type PlanSpec,
  PROXY_DIR,
  planMounts,
} from './mounts.js';
import { type EgressProxy, type ProxyDecision, startEgressProxy } from './proxy.js';
import { findExecutable, sandboxSupport } from './support.js';

/** Where a process stands with its sandbox: what `tack servers` shows and what the trifecta guard trusts. */
export type SandboxStatus =
  | { state: 'none' }
  /** A policy applies; the process has not been started under it yet. */
  | { state: 'configured'; profile: string; origin: string; network: SandboxPolicy['network'] }
  | {
      state: 'enforced';
      tool: string;
      profile: string;
      origin: string;
      network: 'off' | 'proxy' | 'host';
      guarantees: SandboxGuarantees;
    }
  /** The policy prefers a sandbox, this platform has none: the process runs without one. */
  | { state: 'unenforced'; profile: string; origin: string; reason: string };

export function configuredStatus(policy: SandboxPolicy | undefined): SandboxStatus {
  return policy
    ? { state: 'configured', profile: policy.profile, origin: policy.origin, network: policy.network }
    : { state: 'none' };
}

/** One line for listings: `workspace-write, no network`, `none`, `read-only (NOT ENFORCED: ...)`. */
export function describeStatus(status: SandboxStatus): string {
  switch (status.state) {
    case 'none':
      return 'none';
    case 'configured':
      return `${status.profile} (not started)`;
    case 'enforced':
      return status.guarantees.summary;
    case 'unenforced':
      return `${status.profile}: NOT ENFORCED`;
  }
}

export interface LaunchSpec {
  command: string;
  args: readonly string[];
  env: Record<string, string>;
  cwd: string;
  /** Read-only besides the policy's: a skill's own folder. */
  readPaths?: PlanSpec['readPaths'];
  /** Default the policy's. Created when missing. */
  stateDir?: string;
  /** More executables the sandbox must hold (`tack sandbox check`'s probe runs the Node that runs tack). */
  executables?: readonly string[];
  /** What runs, for messages: `server "fs"`, `skill script pdf/extract.py`. */
  subject: string;
  /** A line for the log: proxy decisions, rules that bind nothing, a sandbox that is not enforced. */
  note(message: string): void;
}

/** How to spawn the process: in its sandbox, or (no policy, or one only preferred) as it is. */
export interface Launch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  status: SandboxStatus;
  plan?: MountPlan;
  /** The proxy's decisions so far (an allow-list only). */
  decisions(): readonly ProxyDecision[];
  /** The refusals a line of the process's stderr reports, explained with their rule. */
  explain(line: string): Refusal[];
  /**
   * What the sandbox most likely did to a process that did not start, for the error's hint: refused proxy
   * requests, a package runner without network, paths it was refused (from the stderr lines explained so far).
   */
  diagnose(): string | undefined;
  /** The same sandbox around another command (`tack sandbox check` runs its probe with the process's own plan). */
  wrap(command: readonly string[]): string[];
  /** What the user should hear at start (also in the log): a file argument left hidden, a runner without network. */
  warnings: readonly string[];
  /** Stops the proxy and removes its socket; the process should have exited (or be about to). */
  close(): Promise<void>;
}

/**
 * Prepares a process to run under `policy`: checks the platform (a required sandbox that cannot be had is an error
 * naming why; a preferred one runs the process as it is, with a note), creates its state folder, starts the proxy
 * for an allow-list, and returns bubblewrap's command line around the process's own. Spawn it with `env` and `cwd`.
 */
export async function prepareLaunch(policy: SandboxPolicy | undefined, spec: LaunchSpec): Promise<Launch> {
  const plain: Launch = {
    command: spec.command,
    args: [...spec.args],
    env: spec.env,
    cwd: spec.cwd,
    status: { state: 'none' },
    decisions: () => [],
    explain: () => [],
    diagnose: () => undefined,
    wrap: (command) => [...command],
    warnings: [],
    close: async () => {},
  };
  if (!policy) return plain;
  const support = await sandboxSupport();
  if (!support.available) {
    if (policy.required)
      throw new TackError(
        'SANDBOX_UNAVAILABLE',
        `${spec.subject} requires a sandbox (${policy.origin}), and ${support.reason}`,
        {
          hint: `${support.hint} Or set "required": false in its sandbox policy to run it unsandboxed with a warning.`,
        },
      );
    spec.note(`runs WITHOUT its sandbox (${policy.origin} prefers one): ${support.reason}`);
    return {
      ...plain,
      status: { state: 'unenforced', profile: policy.profile, origin: policy.origin, reason: support.reason },
    };
  }

  const stateDir = spec.stateDir ?? policy.stateDir;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  let proxy: EgressProxy | undefined;
  let proxyDir: string | undefined;
  if (Array.isArray(policy.network)) {
    proxyDir = proxyFolder(policy);
    try {
      proxy = await startEgressProxy({
        rules: policy.network,
        socketPath: join(proxyDir, 'proxy.sock'),
        origin: policy.networkOrigin,
        onDecision: (d) =>
          spec.note(
            `sandbox proxy: ${d.allowed ? 'allowed' : 'REFUSED'} ${d.method} ${d.target}: ${d.reason}`,
          ),
        onUpstreamError: (target, message) =>
          spec.note(`sandbox proxy: ${target} could not be reached: ${message}`),
      });
    } catch (error) {
      rmSync(proxyDir, { recursive: true, force: true });
      throw new TackError(
        'SANDBOX_FAILED',
        `${spec.subject}: the sandbox's network proxy did not start: ${errorMessage(error)}`,
        {
          cause: error,
        },
      );
    }
  }
  const path = spec.env.PATH ?? process.env.PATH;
  const executable = spec.command.includes('/')
    ? resolve(spec.cwd, spec.command)
    : findExecutable(spec.command, path);
  const { programs, fileArgs } = programOf(spec.command, spec.args, spec.cwd);
  // A command that is itself a script (`#!/usr/bin/env node`, an npm bin link) is a program too: its package goes with it.
  if (executable && isScript(executable)) programs.push(executable);
  const plan = planMounts(policy, {
    executables: [executable, ...(proxy ? [process.execPath] : []), ...(spec.executables ?? [])],
    programs,
    fileArgs,
    cwd: spec.cwd,
    stateDir,
    ...(spec.readPaths ? { readPaths: spec.readPaths } : {}),
    ...(proxyDir ? { proxyDir } : {}),
  });
  const closeProxy = async () => {
    await proxy?.close();
    if (proxyDir) rmSync(proxyDir, { recursive: true, force: true });
  };
  if (plan.refused.length > 0) {
    await closeProxy();
    // Paths and link targets a sandboxed process may have written: made printable before they reach a terminal.
    const why = (r: BindRefusal) =>
      printable(
        `${r.path} (${r.rule}) ${r.link ? `resolves through the link ${r.link} -> ${r.target}: ` : 'is refused: '}${r.why}`,
      );
    throw new TackError('SANDBOX_REFUSED', `${spec.subject} was not started: ${why(plan.refused[0]!)}`, {
      details: plan.refused.slice(1).map(why),
      hint: "Remove the link (or put the real folder in its place), or name the path it leads to in the rule itself; for a program or interpreter that lives there (a venv made from pyenv), add its folder to the sandbox's read list. tack never follows a link a sandboxed process could have planted, and never makes / or a system folder writable.",
    });
  }
  for (const skipped of plan.skipped)
    spec.note(`sandbox: ${skipped.path} (${skipped.rule}) is not bound: ${skipped.why}`);
  const warnings = [...plan.notes];
  const runner = downloadingRunner(spec.command, spec.args);
  if (runner && policy.network === false)
    warnings.push(
      `sandbox: ${runner} downloads packages, and this sandbox has no network (network: false, ${policy.networkOrigin || `profile ${policy.profile}`}); use the profile "package-runner", or install the package and run it directly`,
    );
  for (const warning of warnings) spec.note(warning);
  const own = proxy
    ? [process.execPath, '-e', FORWARDER, '--', String(FORWARDER_PORT), `${PROXY_DIR}/proxy.sock`]
    : [];
  const env: Record<string, string> = { ...spec.env, ...sandboxEnvironment(policy, stateDir, spec.env) };
  const bwrap = bwrapArgs(plan);
  const guarantees = guaranteesOf(plan, bwrap);
  const check = identityCheck(boundIdentities(plan.mounts));
  const wrap = (command: readonly string[]) => [...bwrap, ...check, ...own, ...command];
  const refusals = new Map<string, string>();
  return {
    command: support.path,
    args: wrap([spec.command, ...spec.args]),
    env,
    cwd: spec.cwd,
    status: {
      state: 'enforced',
      tool: `bubblewrap ${support.version}`,
      profile: policy.profile,
      origin: policy.origin,
      network: policy.network === false ? 'off' : policy.network === true ? 'host' : 'proxy',
      guarantees,
    },
    plan,
    decisions: () => proxy?.decisions ?? [],
    explain: (line) => {
      const found = explainLine(plan, line);
      for (const refusal of found)
        if (refusals.size < MAX_REMEMBERED_REFUSALS) refusals.set(refusal.subject, refusal.message);
      return found;
    },
    diagnose: () =>
      diagnosis({
        policy,
        runner,
        refusedRequests: (proxy?.decisions ?? []).filter((d) => !d.allowed),
        refusals: [...refusals.values()],
      }),
    wrap,
    warnings,
    close: closeProxy,
  };
}

/**
 * A new folder for one proxy's socket, in tack's own state (hidden from every sandbox whatever its rules, so no
 * other sandboxed process can borrow this one's allow-list through a visible /tmp). A Unix socket path has about
 * 107 bytes: a state folder too deep for that falls back to the temp folder, mode 0700.
 */
function proxyFolder(policy: SandboxPolicy): string {
  const base = join(dirname(policy.stateDir), '.proxy');
  if (Buffer.byteLength(join(base, 'tack-proxy-XXXXXX', 'proxy.sock')) <= 100) {
    mkdirSync(base, { recursive: true, mode: 0o700 });
    return mkdtempSync(join(base, 'tack-proxy-'));
  }
  return mkdtempSync(join(tmpdir(), 'tack-proxy-'));
}

/** Explained refusals kept for a start's diagnosis: the first few say enough. */
const MAX_REMEMBERED_REFUSALS = 8;

/** Commands that fetch a package before they run it: they need their registry, which a sandbox without network refuses. */
export function downloadingRunner(command: string, args: readonly string[]): string | undefined {
  const name = basename(command);
  const positional = args.filter((arg) => !arg.startsWith('-'));
  if (name === 'npx' || name === 'bunx' || name === 'uvx' || name === 'pnpx') return name;
  if (name === 'pipx' && positional[0] === 'run') return 'pipx run';
  if ((name === 'pnpm' || name === 'yarn') && positional[0] === 'dlx') return `${name} dlx`;
  if (name === 'npm' && positional[0] === 'exec') return 'npm exec';
  if (name === 'uv' && positional[0] === 'tool' && positional[1] === 'run') return 'uv tool run';
  return undefined;
}

function diagnosis(facts: {
  policy: SandboxPolicy;
  runner: string | undefined;
  refusedRequests: readonly ProxyDecision[];
  refusals: readonly string[];
}): string | undefined {
  const lines: string[] = [];
  const origin = facts.policy.networkOrigin || `profile ${facts.policy.profile}`;
  if (facts.refusedRequests.length > 0) {
    const targets = [...new Set(facts.refusedRequests.map((d) => d.target))];
    lines.push(
      `The sandbox's proxy refused ${targets.slice(0, 5).join(', ')} (${origin}): add what the server needs to its sandbox's network list.`,
    );
  }
  if (facts.runner && facts.policy.network === false)
    lines.push(
      `${facts.runner} downloads the package first, and the sandbox has no network (network: false, ${origin}): use "sandbox": {"profile": "package-runner"} (its registries through tack's proxy, its cache in its state folder), or install the package and run it directly.`,
    );
  for (const refusal of facts.refusals.slice(0, 3))
    lines.push(refusal.replace(/^sandbox: /, 'The sandbox refused: '));
  // Paths from the server's stderr and hosts it asked the proxy for: the server's words, made printable.
  return lines.length > 0 ? printable(lines.join(' ')) : undefined;
}

/**
 * The variables a sandbox adds to the process's environment: a private TMPDIR, its profile and state folder,
 * and with an allow-list the proxy (both spellings; Node 24+ fetch reads them only with NODE_USE_ENV_PROXY).
 */
export function sandboxEnvironment(
  policy: SandboxPolicy,
  stateDir = policy.stateDir,
  env: Readonly<Record<string, string | undefined>> = {},
): Record<string, string> {
  const proxyUrl = `http://127.0.0.1:${FORWARDER_PORT}`;
  // Package runners keep their cache in the process's own state folder (kept between runs, never shared: a
  // cache one sandboxed process may write must not be what the user's own npx runs next).
  const caches: Record<string, string> = {};
  for (const [name, folder] of PACKAGE_CACHES)
    if (env[name] === undefined) caches[name] = join(stateDir, folder);
  return {
    ...caches,
    TMPDIR: '/tmp',
    TACK_SANDBOX: policy.profile,
    TACK_STATE_DIR: stateDir,
    ...(Array.isArray(policy.network)
      ? {
          HTTP_PROXY: proxyUrl,
          HTTPS_PROXY: proxyUrl,
          http_proxy: proxyUrl,
          https_proxy: proxyUrl,
          NODE_USE_ENV_PROXY: '1',
        }
      : {}),
  };
}

/** The cache variables of package runners, and the folder of the state folder each gets. */
const PACKAGE_CACHES: ReadonlyArray<[string, string]> = [
  ['npm_config_cache', 'npm-cache'],
  ['UV_CACHE_DIR', 'uv-cache'],
  ['PIP_CACHE_DIR', 'pip-cache'],
];

/**
 * What `policy` would guarantee on this machine, for labels decided before anything runs (skill scripts): none
 * when there is no policy or no sandbox to enforce it.
 */
export async function expectedGuarantees(
  policy: SandboxPolicy | undefined,
  readPaths: PlanSpec['readPaths'] = [],
): Promise<SandboxGuarantees | undefined> {
  if (!policy || !(await sandboxSupport()).available) return undefined;
  const plan = planMounts(policy, { cwd: policy.workspace, stateDir: policy.stateDir, readPaths });
  return guaranteesOf(plan, bwrapArgs(plan));
}

/**
 * The program of a command line, and its other file arguments. The program is the script an interpreter runs:
 * the first argument that is not an option and is an existing file, after `node`, `python`, `bun`, `deno`, `tsx`
 * and their kin. The command itself is bound as the executable;
 * every other existing file argument (`--db ~/notes.db`) is data, bound only by a rule (planMounts notes it).
 */
export function programOf(
  command: string,
  args: readonly string[],
  cwd: string,
): { programs: string[]; fileArgs: string[] } {
  const isFile = (arg: string) => {
    if (arg.includes('://') || arg.length > 4096 || arg.includes('\0')) return undefined;
    const path = resolve(cwd, arg);
    try {
      return statSync(path).isFile() ? path : undefined;
    } catch {
      return undefined;
    }
  };
  // The first non-option argument that is a file: after `run` (`deno run x.ts`), or past an option's value that
  // is not one (`node --import tsx server.ts`). A preloaded file (`-r x.js server.js`) counts as the program too.
  const programIndex = INTERPRETER.test(basename(command))
    ? args.findIndex((arg) => !arg.startsWith('-') && isFile(arg) !== undefined)
    : -1;
  const programs: string[] = [];
  const fileArgs: string[] = [];
  args.forEach((arg, i) => {
    if (arg.startsWith('-')) return;
    const file = isFile(arg);
    if (file) (i === programIndex ? programs : fileArgs).push(file);
  });
  return { programs, fileArgs };
}

/** Whether a file starts with `#!`: a script the kernel hands to an interpreter. */
function isScript(file: string): boolean {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const head = Buffer.alloc(2);
    return readSync(fd, head, 0, 2, 0) === 2 && head.toString('latin1') === '#!';
  } catch {
    return false;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Commands that run a script named in their arguments. */
const INTERPRETER =
  /^(node|nodejs|bun|deno|tsx|ts-node|python[0-9.]*|pypy[0-9.]*|uv|ruby|perl|php|bash|sh|dash|zsh|Rscript|lua[0-9.]*)$/;
