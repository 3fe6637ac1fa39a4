import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describeNetwork } from '../config/sandbox.js';
import { bwrapArgs, inside, type MountPlan, PROXY_DIR, realOrSelf } from './mounts.js';

/**
 * What an enforced sandbox guarantees about a process, for the lethal-trifecta guard, `tack tools --security`,
 * `tack servers` and `tack sandbox check`: computed from the exact argument list given to bubblewrap (parsed back
 * here), never from the policy, so a mount tack adds for the process to start (its program, a skill's folder)
 * counts as much as a rule does. Only what the arguments rule out counts; a policy that allows something says
 * nothing about whether the process uses it.
 */
export interface SandboxGuarantees {
  /** No network at all: the process is in its own network namespace with loopback only and no proxy. */
  noNetwork: boolean;
  /**
   * No private file is readable: nothing of the home folders or of tack's own folders is bound, besides the
   * workspace (the user pointed tack at it) and the process's own state folder (its own, per project: what is there
   * it wrote itself). Never true when tack runs as root (the process is uid 0: root-only files stay readable).
   */
  noPrivateFiles: boolean;
  /** Why, in words, with the rule: `no network (network: false, profile read-only)`. */
  network: string;
  files: string;
  /** `workspace-write, no network`. */
  summary: string;
  /** Every path of a home folder or of tack's folders the process can reach, counted or not, with the rule. */
  exposed: ExposedPath[];
}

export interface ExposedPath {
  /** The host path the process reaches. */
  path: string;
  /** Where it appears inside. */
  at: string;
  write: boolean;
  /** The mount's rule: `read: ~/notes (tack.json)`, `the program file itself (...)`. */
  rule: string;
  /** false for the workspace and the process's own state folder, which do not make it hold private data. */
  private: boolean;
}

/** One mount as bubblewrap's argument list states it. */
export interface EnforcedMount {
  flag: '--ro-bind' | '--bind' | '--tmpfs' | '--dir' | '--symlink' | '--dev' | '--proc';
  source?: string;
  dest: string;
}

export interface EnforcedArgs {
  mounts: EnforcedMount[];
  unshareNet: boolean;
  chdir: string | undefined;
}

const ARITY: Record<string, number> = {
  '--die-with-parent': 0,
  '--new-session': 0,
  '--unshare-pid': 0,
  '--unshare-ipc': 0,
  '--unshare-uts': 0,
  '--unshare-cgroup-try': 0,
  '--unshare-net': 0,
  '--cap-drop': 1,
  '--chdir': 1,
  '--tmpfs': 1,
  '--dir': 1,
  '--dev': 1,
  '--proc': 1,
  '--ro-bind': 2,
  '--bind': 2,
  '--symlink': 2,
};

/** bubblewrap's arguments (up to `--`) read back into mounts; a flag tack does not know is an error, not a guess. */
export function parseBwrapArgs(args: readonly string[]): EnforcedArgs {
  const out: EnforcedArgs = { mounts: [], unshareNet: false, chdir: undefined };
  for (let i = 0; i < args.length; ) {
    const flag = args[i]!;
    if (flag === '--') break;
    const arity = ARITY[flag];
    if (arity === undefined) throw new Error(`unknown bubblewrap argument ${flag}`);
    const params = args.slice(i + 1, i + 1 + arity);
    i += 1 + arity;
    if (flag === '--unshare-net') out.unshareNet = true;
    else if (flag === '--chdir') out.chdir = params[0];
    else if (flag === '--ro-bind' || flag === '--bind' || flag === '--symlink')
      out.mounts.push({ flag, source: params[0]!, dest: params[1]! });
    else if (flag === '--tmpfs' || flag === '--dir' || flag === '--dev' || flag === '--proc')
      out.mounts.push({ flag, dest: params[0]! });
  }
  return out;
}

/**
 * The host paths under `roots` that the mounts make reachable: a bind whose source lies in a root, or holds one
 * (the root file system holds the home folder), unless a later mount covers the point where it appears.
 */
export function reachableUnder(
  enforced: EnforcedArgs,
  roots: readonly string[],
): Array<{ path: string; at: string; write: boolean; index: number }> {
  const found: Array<{ path: string; at: string; write: boolean; index: number }> = [];
  enforced.mounts.forEach((mount, index) => {
    if (mount.flag !== '--ro-bind' && mount.flag !== '--bind') return;
    const source = mount.source!;
    for (const root of roots) {
      let path: string;
      let at: string;
      if (inside(source, root)) {
        path = source;
        at = mount.dest;
      } else if (inside(root, source)) {
        path = root;
        at = join(mount.dest, relative(source, root));
      } else continue;
      // --dir and --symlink make a folder or a link, they mount nothing: only a mount covers what lies below it.
      const covered = enforced.mounts
        .slice(index + 1)
        .some((later) => later.flag !== '--dir' && later.flag !== '--symlink' && inside(at, later.dest));
      if (!covered) found.push({ path, at, write: mount.flag === '--bind', index });
    }
  });
  return found;
}

/** The guarantees of `plan` as enforced: from `args`, the exact bubblewrap arguments the process is started with. */
export function guaranteesOf(plan: MountPlan, args: readonly string[] = bwrapArgs(plan)): SandboxGuarantees {
  const { policy } = plan;
  const enforced = parseBwrapArgs(args);
  const ruleOf = (index: number) => {
    const mount = enforced.mounts[index]!;
    if (mount.dest === '/' && policy.home)
      return `the home folder is visible (home: true, ${policy.homeOrigin})`;
    // The last of equal mounts is the one on top (a write rule over a read rule of the same folder).
    const planned = plan.mounts.findLast((m) => m.dest === mount.dest && (m.source ?? '/') === mount.source);
    return planned?.rule ?? `${mount.flag} ${mount.source} ${mount.dest}`;
  };
  const proxied = enforced.mounts.some((mount) => mount.dest === PROXY_DIR);
  // The host's /tmp and /run hold other processes' sockets (ssh-agent, X11, D-Bus, Docker): a bind that shows one
  // of them is a way out even without a network.
  const workspace = realOrSelf(policy.workspace);
  const stateDir = realOrSelf(policy.stateDir);
  // Anything of the host's /tmp or /run (or TMPDIR) but the workspace (the user's) and the process's own state: an
  // ssh-agent folder, /tmp/.X11-unix, /run/user/<uid> hold sockets another process answers.
  const socketRoots = [...new Set(['/tmp', '/run', realOrSelf(tmpdir())])];
  const workspaceIsSockets = socketRoots.some((root) => inside(root, workspace));
  const sockets = reachableUnder(enforced, socketRoots).filter(
    (found) =>
      enforced.mounts[found.index]!.dest !== PROXY_DIR &&
      !(inside(found.path, workspace) && !workspaceIsSockets) &&
      !inside(found.path, stateDir),
  );
  const noNetwork = enforced.unshareNet && !proxied && sockets.length === 0;
  const networkRule = policy.networkOrigin || `profile ${policy.profile}`;
  const network = noNetwork
    ? `no network (network: false, ${networkRule})`
    : enforced.unshareNet && !proxied
      ? `no network, but the host's ${sockets.map((found) => found.path).join(', ')} is reachable (${ruleOf(sockets[0]!.index)}): sockets there lead out`
      : !enforced.unshareNet
        ? `host network (network: true, ${networkRule})`
        : `network only to ${Array.isArray(policy.network) ? policy.network.map((r) => r.written).join(', ') : 'nothing'} through tack's proxy (${networkRule})`;
  const privateRoots = [...plan.homes, ...plan.tackDirs];
  // The workspace is the user's to give, unless it holds a private folder (a project at ~ or /).
  const workspaceIsPrivate = privateRoots.some((root) => inside(root, workspace));
  const exposed: ExposedPath[] = reachableUnder(enforced, privateRoots)
    // The proxy's folder (in tack's state) holds its socket alone: that is the network line, not a file.
    .filter((found) => enforced.mounts[found.index]!.dest !== PROXY_DIR)
    .filter((found, i, all) => all.findIndex((f) => f.path === found.path && f.at === found.at) === i)
    .map((found) => ({
      path: found.path,
      at: found.at,
      write: found.write,
      rule: ruleOf(found.index),
      private: !((!workspaceIsPrivate && inside(found.path, workspace)) || inside(found.path, stateDir)),
    }));
  const counted = exposed.filter((e) => e.private);
  // bubblewrap keeps the uid: under root the process is uid 0 without capabilities, and root-only files of the
  // system (/etc/shadow) stay readable through the read-only root.
  const asRoot = process.geteuid?.() === 0;
  const noPrivateFiles = counted.length === 0 && !asRoot;
  const hidden = `hidden${policy.homeOrigin ? `: home: false, ${policy.homeOrigin}` : ''}`;
  return {
    noNetwork,
    noPrivateFiles,
    network,
    files: noPrivateFiles
      ? `no private files (the home folder is ${hidden}, and nothing in it is bound besides the workspace)`
      : [
          ...(asRoot
            ? [
                "tack runs as root: the process is uid 0 without capabilities, and the system's root-only files (/etc/shadow) are readable",
              ]
            : []),
          ...counted.map((e) => `${e.path} is ${e.write ? 'writable' : 'readable'} (${e.rule})`),
        ].join('; '),
    summary: `${policy.profile}, ${describeNetwork(policy.network)}`,
    exposed,
  };
}
