import { realpathSync } from 'node:fs';
import { describeNetwork } from '../config/sandbox.js';
import { inside, type MountPlan } from './mounts.js';

/**
 * What an enforced sandbox guarantees about a process, for the lethal-trifecta guard: facts the kernel holds,
 * not guesses from a tool's name. Only what the policy rules out counts; a policy that allows something says
 * nothing about whether the process uses it.
 */
export interface SandboxGuarantees {
  /** No network at all: the process is in its own network namespace with loopback only and no proxy. */
  noNetwork: boolean;
  /**
   * No private file is readable: the home folder and tack's own folders are hidden and no rule binds a path in
   * them (the workspace and the process's own state folder do not count: the user pointed tack at the one, the
   * other starts empty).
   */
  noPrivateFiles: boolean;
  /** Why, in words, with the rule: `no network (network: false, profile read-only)`. */
  network: string;
  files: string;
  /** `workspace-write, no network`. */
  summary: string;
}

export function guaranteesOf(plan: MountPlan): SandboxGuarantees {
  const { policy } = plan;
  const networkRule = policy.networkOrigin || `profile ${policy.profile}`;
  const network =
    policy.network === false
      ? `no network (network: false, ${networkRule})`
      : policy.network === true
        ? `host network (network: true, ${networkRule})`
        : `network only to ${policy.network.map((r) => r.written).join(', ')} through tack's proxy (${networkRule})`;
  const workspace = realOrSame(policy.workspace);
  // tack's own folders are hidden again over any bind (mounts.ts), so only the home folders can leak.
  const privateRoots = plan.homes;
  // The workspace is the user's to give, unless it holds the home folder (a project at ~ or /).
  const workspaceIsPrivate = privateRoots.some((root) => inside(root, workspace));
  const exposing = policy.home
    ? [`the home folder is visible (home: true, ${policy.homeOrigin})`]
    : plan.mounts
        .filter((mount) => mount.kind === 'ro' || mount.kind === 'rw')
        .filter((mount) => mount.policy === true)
        .filter((mount) => {
          const source = mount.source ?? mount.dest;
          const touches = privateRoots.some((root) => inside(source, root) || inside(root, source));
          const inWorkspace = !workspaceIsPrivate && inside(source, workspace);
          return touches && !inWorkspace;
        })
        .map((mount) => `${mount.source ?? mount.dest} is readable (${mount.rule})`);
  const noPrivateFiles = exposing.length === 0;
  return {
    noNetwork: policy.network === false,
    noPrivateFiles,
    network,
    files: noPrivateFiles
      ? `no private files (the home folder is hidden${policy.homeOrigin ? `: home: false, ${policy.homeOrigin}` : ''}, and no rule binds a path in it besides the workspace)`
      : exposing.join('; '),
    summary: `${policy.profile}, ${describeNetwork(policy.network)}`,
  };
}

function realOrSame(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}
