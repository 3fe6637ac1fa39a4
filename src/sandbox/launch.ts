import { mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { SandboxPolicy } from '../config/sandbox.js';
import { errorMessage, TackError } from '../errors.js';
import { explainLine, type Refusal } from './explain.js';
import { FORWARDER, FORWARDER_PORT } from './forwarder.js';
import { guaranteesOf, type SandboxGuarantees } from './guarantees.js';
import { bwrapArgs, type MountPlan, type PlanSpec, PROXY_DIR, planMounts } from './mounts.js';
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
    proxyDir = mkdtempSync(join(tmpdir(), 'tack-proxy-'));
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
  const plan = planMounts(policy, {
    executables: [executable, ...(proxy ? [process.execPath] : [])],
    programs: programFiles(spec.args, spec.cwd),
    cwd: spec.cwd,
    stateDir,
    ...(spec.readPaths ? { readPaths: spec.readPaths } : {}),
    ...(proxyDir ? { proxyDir } : {}),
  });
  for (const skipped of plan.skipped)
    spec.note(`sandbox: ${skipped.path} (${skipped.rule}) is not bound: ${skipped.why}`);
  const own = proxy
    ? [process.execPath, '-e', FORWARDER, '--', String(FORWARDER_PORT), `${PROXY_DIR}/proxy.sock`]
    : [];
  const env: Record<string, string> = { ...spec.env, ...sandboxEnvironment(policy, stateDir) };
  const guarantees = guaranteesOf(plan);
  return {
    command: support.path,
    args: [...bwrapArgs(plan), ...own, spec.command, ...spec.args],
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
    explain: (line) => explainLine(plan, line),
    close: async () => {
      await proxy?.close();
      if (proxyDir) rmSync(proxyDir, { recursive: true, force: true });
    },
  };
}

/**
 * The variables a sandbox adds to the process's environment: a private TMPDIR, its profile and state folder,
 * and with an allow-list the proxy (both spellings; Node 24+ fetch reads them only with NODE_USE_ENV_PROXY).
 */
export function sandboxEnvironment(
  policy: SandboxPolicy,
  stateDir = policy.stateDir,
): Record<string, string> {
  const proxyUrl = `http://127.0.0.1:${FORWARDER_PORT}`;
  return {
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

/**
 * What `policy` would guarantee on this machine, for labels decided before anything runs (skill scripts): none
 * when there is no policy or no sandbox to enforce it.
 */
export async function expectedGuarantees(
  policy: SandboxPolicy | undefined,
): Promise<SandboxGuarantees | undefined> {
  if (!policy || !(await sandboxSupport()).available) return undefined;
  return guaranteesOf(planMounts(policy, { cwd: policy.workspace, stateDir: policy.stateDir }));
}

/**
 * The files of the command line that are the program itself: `node /path/server.js`, `python /path/server.py`.
 * A server installed under a folder the sandbox hides (/tmp, a home folder) must still be able to read its own code
 * and its dependencies: planMounts binds each one's package (see PlanSpec.programs). Arguments that are not
 * existing files (flags, names, URLs) are left alone.
 */
function programFiles(args: readonly string[], cwd: string): string[] {
  const out: string[] = [];
  for (const arg of args) {
    if (arg.startsWith('-') || arg.includes('://') || arg.length > 4096) continue;
    const path = resolve(cwd, arg);
    try {
      if (statSync(path).isFile()) out.push(path);
    } catch {
      // not a file: an argument of another kind
    }
  }
  return out;
}
