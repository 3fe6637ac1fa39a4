import { existsSync, realpathSync } from 'node:fs';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { SandboxPolicy } from '../config/sandbox.js';
import { NAMESPACE_FLAGS } from './support.js';

/**
 * The file system a sandboxed process sees, as an ordered list of mounts: the root read-only, `/dev` and
 * `/proc` minimal, `/tmp` and `/run` private, the home folder and tack's own folders hidden, then the policy's
 * paths. The same list gives bubblewrap its arguments and explains a refusal afterwards (which mount covers a
 * path, and which rule put it there), so the explanation cannot drift from what was enforced.
 */

export type MountKind = 'root' | 'dev' | 'proc' | 'hide' | 'dir' | 'ro' | 'rw';

export interface Mount {
  kind: MountKind;
  /** Where it appears inside the sandbox. */
  dest: string;
  /** The host path of a bind (symlinks resolved). */
  source?: string;
  /** Why it is there: a policy rule (`write[0] (tack.json)`), a profile, or what tack itself adds. */
  rule: string;
  /** Bound by a read or write rule of the policy (not by tack for the process to start at all). */
  policy?: boolean;
}

export interface MountPlan {
  policy: SandboxPolicy;
  /** In the order bubblewrap applies them: a later mount covers an earlier one at or above its path. */
  mounts: Mount[];
  /** Rules that name nothing bindable: a path that does not exist, or one inside tack's own folders. */
  skipped: Array<{ path: string; rule: string; why: string }>;
  cwd: string;
  /** The home folders (hidden unless `home: true`), symlinks resolved: what counts as private. */
  homes: string[];
  /** tack's own folders, always hidden (a bind inside them is skipped, one around them hides them again). */
  tackDirs: string[];
}

export interface PlanSpec {
  /** The executables that must start (absolute paths, as found on the PATH); bound when the policy hides them. */
  executables?: ReadonlyArray<string | undefined>;
  /**
   * Files of the command line that are the program (`node <file>`): when the policy hides one, its package (the
   * nearest folder above it with a package.json or node_modules, else its own folder) is bound read-only, so the
   * program can load itself and its dependencies. Never more than that folder.
   */
  programs?: readonly string[];
  cwd: string;
  /** Read-only besides the policy's paths: a skill's own folder. */
  readPaths?: ReadonlyArray<{ path: string; rule: string }>;
  /** The process's own writable folder (created by the caller). */
  stateDir: string;
  /** The host folder holding the proxy socket; appears at PROXY_DIR inside. */
  proxyDir?: string | undefined;
}

/** Where the proxy's socket folder appears inside the sandbox. */
export const PROXY_DIR = '/run/tack-proxy';

/** Mounts of equal depth apply in this order, so a policy's bind beats the home it sits in, and tack's hiding
 * of its own folders beats a policy bind of the same folder. */
const PRIORITY: Record<string, number> = { base: 0, rule: 1, write: 2, tack: 3, own: 4 };

export function planMounts(policy: SandboxPolicy, spec: PlanSpec): MountPlan {
  const skipped: MountPlan['skipped'] = [];
  const staged: Array<Mount & { priority: number }> = [];
  const add = (mount: Mount, priority: keyof typeof PRIORITY) =>
    staged.push({ ...mount, priority: PRIORITY[priority]! });
  add({ kind: 'root', dest: '/', rule: 'the root file system, read-only' }, 'base');
  add({ kind: 'dev', dest: '/dev', rule: 'a minimal /dev' }, 'base');
  add({ kind: 'proc', dest: '/proc', rule: "a /proc of the sandbox's own processes" }, 'base');
  add({ kind: 'hide', dest: '/tmp', rule: 'a private temp folder (the host /tmp is not visible)' }, 'base');
  add(
    { kind: 'hide', dest: '/run', rule: "a private /run (system services' sockets are not reachable)" },
    'base',
  );

  const homes = unique(policy.homes.flatMap(withRealPath));
  const tackDirs = unique(policy.hidden.flatMap(withRealPath));
  if (!policy.home)
    for (const home of homes)
      add(
        { kind: 'hide', dest: home, rule: `the home folder is hidden (home: false, ${policy.homeOrigin})` },
        'base',
      );
  // A symlinked path is bound where it points; also where it was named when the link itself is gone there (its
  // folder hidden), decided once the plan stands (bubblewrap cannot mount onto a link it can see).
  const aliases: Array<Mount & { priority: number }> = [];
  const bind = (
    kind: 'ro' | 'rw',
    path: string,
    rule: string,
    priority: keyof typeof PRIORITY,
    policy = false,
  ) => {
    const real = realPath(path);
    if (real === undefined) {
      skipped.push({ path, rule, why: 'it does not exist' });
      return;
    }
    if (priority !== 'own' && tackDirs.some((dir) => inside(real, dir))) {
      skipped.push({ path, rule, why: "it is inside tack's own folders, which stay hidden" });
      return;
    }
    add({ kind, dest: real, source: real, rule, policy }, priority);
    if (path !== real)
      aliases.push({ kind, dest: path, source: real, rule, policy, priority: PRIORITY[priority]! });
  };
  for (const rule of policy.read)
    bind('ro', rule.path, `read: ${rule.written} (${rule.origin})`, 'rule', true);
  for (const rule of policy.write)
    bind('rw', rule.path, `write: ${rule.written} (${rule.origin})`, 'write', true);
  for (const extra of spec.readPaths ?? []) bind('ro', extra.path, extra.rule, 'rule');
  for (const dir of tackDirs)
    add(
      { kind: 'hide', dest: dir, rule: "tack's own folders are hidden (its store holds OAuth tokens)" },
      'tack',
    );
  bind('rw', spec.stateDir, `its own state folder (${spec.stateDir})`, 'own');
  if (spec.proxyDir)
    add({ kind: 'rw', dest: PROXY_DIR, source: spec.proxyDir, rule: "tack's network proxy" }, 'own');
  if (policy.network === true) {
    // With the host network, a resolv.conf that lives under /run (systemd-resolved) must stay readable.
    const resolv = realPath('/etc/resolv.conf');
    if (resolv && inside(resolv, '/run'))
      add({ kind: 'ro', dest: resolv, source: resolv, rule: 'DNS settings (host network)' }, 'own');
  }

  const plan: MountPlan = { policy, mounts: order(staged), skipped, cwd: spec.cwd, homes, tackDirs };
  const extra = aliases.filter((alias) => accessOf(plan, dirname(alias.dest)).throwaway);
  // The executable and the working folder must exist inside for the process to start at all.
  for (const command of spec.executables ?? []) {
    if (!command || !isAbsolute(command) || accessOf(plan, command).read) continue;
    const real = realPath(command);
    if (!real) continue;
    const rule = 'the executable itself';
    extra.push({ kind: 'ro', dest: command, source: real, rule, priority: PRIORITY.own! });
    if (real !== command) extra.push({ kind: 'ro', dest: real, source: real, rule, priority: PRIORITY.own! });
  }
  for (const file of spec.programs ?? []) {
    if (accessOf(plan, file).read) continue;
    const real = realPath(file);
    if (!real) continue;
    // Never a home folder or anything holding one (a package.json in ~ must not unhide the home), nor the root.
    const found = packageRoot(real);
    const root = found === '/' || homes.some((home) => inside(home, found)) ? dirname(real) : found;
    if (tackDirs.some((dir) => inside(root, dir) || inside(dir, root))) continue;
    extra.push({
      kind: 'ro',
      dest: root,
      source: root,
      rule: `the program's own package (${root}), read-only`,
      priority: PRIORITY.own!,
    });
    // Its dependencies: Node resolves them in every node_modules above the package (npm hoists them to the top
    // one), so a program installed under a hidden folder (/tmp, a clone there) needs those bound too.
    for (let dir = dirname(root); dirname(dir) !== dir; dir = dirname(dir)) {
      const modules = join(dir, 'node_modules');
      if (modules === root || inside(modules, root) || !existsSync(modules) || accessOf(plan, modules).read)
        continue;
      if (tackDirs.some((d) => inside(modules, d) || inside(d, modules))) continue;
      if (extra.some((mount) => mount.dest === modules)) continue;
      extra.push({
        kind: 'ro',
        dest: modules,
        source: modules,
        rule: `the program's dependencies (${modules}), read-only`,
        priority: PRIORITY.own!,
      });
    }
  }
  if (!accessOf(plan, spec.cwd).read)
    extra.push({
      kind: 'dir',
      dest: spec.cwd,
      rule: 'an empty stand-in for the working folder, which the policy hides',
      priority: PRIORITY.own!,
    });
  if (extra.length > 0) plan.mounts = order([...staged, ...extra]);
  return plan;
}

/** Stable order by depth, then priority: a deeper mount always lands on top of a shallower one. */
function order(staged: ReadonlyArray<Mount & { priority: number }>): Mount[] {
  return staged
    .map((mount, index) => ({ mount, index, depth: depthOf(mount.dest) }))
    .sort((a, b) => a.depth - b.depth || a.mount.priority! - b.mount.priority! || a.index - b.index)
    .map(({ mount: { priority: _priority, ...mount } }) => mount);
}

/** bubblewrap's arguments for the plan, up to and including `--`; the command follows. */
export function bwrapArgs(plan: MountPlan): string[] {
  const args: string[] = [...NAMESPACE_FLAGS];
  if (plan.policy.network !== true) args.push('--unshare-net');
  for (const mount of plan.mounts) {
    if (mount.kind === 'root') args.push('--ro-bind', '/', '/');
    else if (mount.kind === 'dev') args.push('--dev', mount.dest);
    else if (mount.kind === 'proc') args.push('--proc', mount.dest);
    else if (mount.kind === 'hide') args.push('--tmpfs', mount.dest);
    else if (mount.kind === 'dir') args.push('--dir', mount.dest);
    else args.push(mount.kind === 'ro' ? '--ro-bind' : '--bind', mount.source!, mount.dest);
  }
  args.push('--chdir', plan.cwd, '--');
  return args;
}

export interface Access {
  read: boolean;
  write: boolean;
  /** What a write there does: lands on the host, or in a throwaway folder of the sandbox. */
  throwaway: boolean;
  /** The mount that decides, and so the rule to name. */
  mount: Mount;
}

/** What the process may do with `path` (absolute, as seen inside): the last mount at or above it decides. */
export function accessOf(plan: Pick<MountPlan, 'mounts'>, path: string): Access {
  let decisive = plan.mounts[0]!;
  for (const mount of plan.mounts) if (inside(path, mount.dest)) decisive = mount;
  const kind = decisive.kind;
  const hidden = kind === 'hide' || kind === 'dir';
  return {
    read: !(hidden && path !== decisive.dest),
    write: kind === 'rw' || hidden,
    throwaway: hidden,
    mount: decisive,
  };
}

/** `path` is `root` or lies below it. */
export function inside(path: string, root: string): boolean {
  if (root === '/') return true;
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
}

function depthOf(path: string): number {
  return path === '/' ? 0 : path.split('/').length - 1;
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/** An existing path and, when it is a symlink or below one, where it leads; nothing for a missing path. */
function withRealPath(path: string): string[] {
  const real = realPath(path);
  if (real === undefined) return [];
  return real !== resolve(path) ? [resolve(path), real] : [real];
}

function unique(paths: readonly string[]): string[] {
  return [...new Set(paths)];
}

/** The folder a program file belongs to: the nearest above it with a package.json or node_modules, else its own. */
function packageRoot(file: string): string {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) || existsSync(join(dir, 'node_modules'))) return dir;
    if (dirname(dir) === dir) return dirname(file);
  }
}
