import { existsSync, lstatSync, readFileSync, readlinkSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { SandboxPolicy } from '../config/sandbox.js';
import { NAMESPACE_FLAGS } from './support.js';

/**
 * The file system a sandboxed process sees, as an ordered list of mounts: the root read-only, `/dev` and
 * `/proc` minimal, `/tmp` and `/run` private, the home folder and tack's own folders hidden, then the policy's
 * paths. The same list gives bubblewrap its arguments and explains a refusal afterwards (which mount covers a
 * path, and which rule put it there), so the explanation cannot drift from what was enforced.
 */

/** `link`: a symlink made inside (where a hidden folder held a link on the host), pointing at `source`. */
export type MountKind = 'root' | 'dev' | 'proc' | 'hide' | 'dir' | 'link' | 'ro' | 'rw';

/**
 * Why a mount is there: the base layout, a `read`/`write` rule of the policy, a path the caller adds (a skill's
 * folder), what the process needs to start at all (its executable, its program file or package), its own state
 * folder, the proxy, tack's own folders hidden again.
 */
export type MountPurpose =
  | 'base'
  | 'rule'
  | 'extra'
  | 'executable'
  | 'program'
  | 'state'
  | 'proxy'
  | 'tack'
  | 'system';

export interface Mount {
  kind: MountKind;
  /** Where it appears inside the sandbox. */
  dest: string;
  /** The host path of a bind (symlinks resolved). */
  source?: string;
  /** Why it is there: a policy rule (`write[0] (tack.json)`), a profile, or what tack itself adds. */
  rule: string;
  purpose: MountPurpose;
}

/** What a bind must show in the sandbox's mount table: checked inside before the command runs. */
export interface BoundIdentity {
  /** The path inside the sandbox (its mount point). */
  dest: string;
  /** `major:minor` of the file system holding the host path. */
  device: string;
  /** The host path as a path inside that file system (mountinfo's root field). */
  root: string;
}

/** A path the plan will not bind, so the process must not start: a link it may not follow, or a folder too wide. */
export interface BindRefusal {
  path: string;
  rule: string;
  /** The link on the way, and what it says (absent for a folder refused as such). */
  link?: string;
  target?: string;
  why: string;
}

export interface MountPlan {
  policy: SandboxPolicy;
  /** In the order bubblewrap applies them: a later mount covers an earlier one at or above its path. */
  mounts: Mount[];
  /** Rules that name nothing bindable: a path that does not exist, or one inside tack's own folders. */
  skipped: Array<{ path: string; rule: string; why: string }>;
  /**
   * Paths that resolve through a link a sandboxed process could have planted, that a link turns into a private
   * folder, or that would make the system writable: the process must not start (prepareLaunch refuses it).
   */
  refused: BindRefusal[];
  /** What tack chose not to bind, said once in the log: a file argument in a hidden folder. */
  notes: string[];
  /** The files of the command line (its program, then its other file arguments), as planned from. */
  commandFiles: string[];
  cwd: string;
  /** The home folders (hidden unless `home: true`), symlinks resolved: what counts as private. */
  homes: string[];
  /** tack's own folders, always hidden (a bind inside them is skipped, one around them hides them again). */
  tackDirs: string[];
}

export interface PlanSpec {
  /** The executables that must start (absolute paths, as found on the PATH); bound alone, read-only, when hidden. */
  executables?: ReadonlyArray<string | undefined>;
  /**
   * The program file of the command line (`node <file>`, see programOf in launch.ts): when the policy hides it,
   * its package (the nearest folder above it with a package.json or node_modules) is bound read-only with the
   * node_modules above it, unless that folder is, holds or lies above a folder the sandbox hides (the home, tack's
   * folders, /tmp, /run, /): then the file alone.
   */
  programs?: readonly string[];
  /** Existing files of the command line that are not the program: never bound; named in a note when hidden. */
  fileArgs?: readonly string[];
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

/** The folders every sandbox replaces with an empty one of its own. */
const THROWAWAY_ROOTS = ['/tmp', '/run'];

/** Host folders no link may lead a bind into: the sandbox has its own, and the host's hold other processes' state. */
const SYSTEM_ROOTS = ['/tmp', '/run', '/proc', '/dev'];

/** Folders of the root that hold services' Unix sockets, known to tack. */
const SOCKET_FOLDERS = [
  '/var/spool/postfix',
  '/var/lib/lxd',
  '/var/snap/lxd',
  '/var/lib/mysql',
  '/var/lib/docker',
  '/var/lib/libvirt',
];

/** Folders whose insides no link may turn a writable rule into (/usr/local/bin, /etc/cron.d). */
const SYSTEM_TREES = ['/usr', '/etc', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/boot'];

/** Folders no rule makes writable: the root and the system's own (a workspace at / would otherwise be all of it). */
const SYSTEM_FOLDERS = ['/', '/var', '/opt', ...SYSTEM_TREES];

/** A writable path that a link leads into the system's own folders, which the path as written is not in. */
function intoSystem(path: string, real: string): boolean {
  const written = resolve(path);
  return SYSTEM_TREES.some((tree) => inside(real, tree) && !inside(written, tree));
}

/** How many links one path may pass through, as the kernel allows (ELOOP past it). */
const MAX_LINKS = 40;

export function planMounts(policy: SandboxPolicy, spec: PlanSpec): MountPlan {
  const skipped: MountPlan['skipped'] = [];
  const refused: BindRefusal[] = [];
  const notes: string[] = [];
  const staged: Array<Mount & { priority: number }> = [];
  const add = (mount: Mount, priority: keyof typeof PRIORITY) =>
    staged.push({ ...mount, priority: PRIORITY[priority]! });
  add({ kind: 'root', dest: '/', rule: 'the root file system, read-only', purpose: 'base' }, 'base');
  add({ kind: 'dev', dest: '/dev', rule: 'a minimal /dev', purpose: 'base' }, 'base');
  add(
    { kind: 'proc', dest: '/proc', rule: "a /proc of the sandbox's own processes", purpose: 'base' },
    'base',
  );
  add(
    {
      kind: 'hide',
      dest: '/tmp',
      rule: 'a private temp folder (the host /tmp is not visible)',
      purpose: 'base',
    },
    'base',
  );
  add(
    {
      kind: 'hide',
      dest: '/run',
      rule: "a private /run (system services' sockets are not reachable)",
      purpose: 'base',
    },
    'base',
  );

  // Unix sockets on the read-only root outside /tmp and /run: a mail system's spool (postfix sends what reaches it),
  // LXD's and databases' sockets. Hidden where they exist; the ones tack does not know stay (docs/security.md).
  for (const folder of SOCKET_FOLDERS)
    if (existsSync(folder) && !lstatSync(folder).isSymbolicLink())
      add(
        { kind: 'hide', dest: folder, rule: "a system service's sockets are not reachable", purpose: 'base' },
        'base',
      );
  const homes = unique(policy.homes.flatMap(withRealPath));
  const tackDirs = unique(policy.hidden.flatMap(withRealPath));
  const privateRoots = [...homes, ...tackDirs];
  // Each hidden folder under all its names (a home reached through /home -> /var/home is one folder).
  const linkRoots = [
    ...policy.homes.map(withRealPath),
    ...policy.hidden.map(withRealPath),
    ...SYSTEM_ROOTS.map((root) => [root]),
  ].filter((names) => names.length > 0);
  const workspaceNames = withRealPath(policy.workspace);
  // The workspace is the user's wherever its path leads, unless it holds a private folder (a project at ~ or /).
  const workspace = workspaceNames.some((dir) => privateRoots.some((root) => inside(root, dir)))
    ? []
    : workspaceNames.slice(-1);
  // Folders a sandboxed process of this configuration may write: a link below one of them may have been planted
  // by that process (see linkRefusal).
  const contested = unique(
    [
      policy.workspace,
      ...policy.write.map((rule) => rule.path),
      ...(policy.writableBySandboxes ?? []),
    ].flatMap(withRealPath),
  );
  // Hidden where they really are: bubblewrap cannot mount over a link (/home -> /var/home), and inside the sandbox
  // the link leads into the hidden folder all the same.
  const realNames = (paths: readonly string[]) =>
    unique(paths.flatMap((path) => withRealPath(path).slice(-1)));
  if (!policy.home)
    for (const home of realNames(policy.homes))
      add(
        {
          kind: 'hide',
          dest: home,
          rule: `the home folder is hidden (home: false, ${policy.homeOrigin})`,
          purpose: 'base',
        },
        'base',
      );
  // A symlinked path is bound where it points; where the link itself is gone (its folder hidden), a link to it is
  // made again inside, decided once the plan stands (a link, not a second bind: a program finds its package from
  // where its file really is, as Node does from a bin link).
  const aliases: Array<Mount & { priority: number }> = [];
  const bind = (
    kind: 'ro' | 'rw',
    path: string,
    rule: string,
    priority: keyof typeof PRIORITY,
    purpose: MountPurpose,
  ) => {
    const resolved = resolveLinks(path);
    if (resolved === undefined) {
      skipped.push({ path, rule, why: 'it does not exist' });
      return;
    }
    const refusal = linkRefusal(path, resolved, rule, {
      contested,
      hiddenRoots: linkRoots,
      write: kind === 'rw',
      shown: (real) => shownAsItself(order(staged), real),
      workspace,
    });
    if (refusal) {
      refused.push(refusal);
      return;
    }
    const real = resolved.real;
    if (priority !== 'own' && tackDirs.some((dir) => inside(real, dir))) {
      skipped.push({ path, rule, why: "it is inside tack's own folders, which stay hidden" });
      return;
    }
    if (kind === 'rw' && (SYSTEM_FOLDERS.includes(real) || intoSystem(path, real))) {
      // A workspace at / (tack started there) would make every program on the machine writable, tack's own too.
      refused.push({
        path,
        rule,
        why: `${real} would become writable: the whole system, or one of its own folders`,
      });
      return;
    }
    if (real === '/') {
      skipped.push({ path, rule, why: 'the root file system is read-only in every sandbox already' });
      return;
    }
    add({ kind, dest: real, source: real, rule, purpose }, priority);
    const alias = linkName(path);
    if (alias !== real)
      aliases.push({ kind: 'link', dest: alias, source: real, rule, purpose, priority: PRIORITY[priority]! });
  };
  for (const rule of policy.read)
    bind('ro', rule.path, `read: ${rule.written} (${rule.origin})`, 'rule', 'rule');
  for (const rule of policy.write)
    bind('rw', rule.path, `write: ${rule.written} (${rule.origin})`, 'write', 'rule');
  for (const extra of spec.readPaths ?? []) bind('ro', extra.path, extra.rule, 'rule', 'extra');
  for (const dir of realNames(policy.hidden))
    add(
      {
        kind: 'hide',
        dest: dir,
        rule: "tack's own folders are hidden (its store holds OAuth tokens)",
        purpose: 'tack',
      },
      'tack',
    );
  bind('rw', spec.stateDir, `its own state folder (${spec.stateDir})`, 'own', 'state');
  if (spec.proxyDir)
    add(
      { kind: 'rw', dest: PROXY_DIR, source: spec.proxyDir, rule: "tack's network proxy", purpose: 'proxy' },
      'own',
    );
  if (policy.network === true) {
    // With the host network, a resolv.conf that lives under /run (systemd-resolved) must stay readable.
    const resolv = realPath('/etc/resolv.conf');
    if (resolv && inside(resolv, '/run'))
      add(
        { kind: 'ro', dest: resolv, source: resolv, rule: 'DNS settings (host network)', purpose: 'system' },
        'own',
      );
  }

  const plan: MountPlan = {
    policy,
    mounts: order(staged),
    skipped,
    refused,
    notes,
    commandFiles: [...(spec.programs ?? []), ...(spec.fileArgs ?? [])],
    cwd: spec.cwd,
    homes,
    tackDirs,
  };
  const extra = aliases.filter((alias) => accessOf(plan, dirname(alias.dest)).throwaway);
  // Judged where the path really is: the root's links are the host's, so /home/me/x is /var/home/me/x inside too.
  const visibleAt = (path: string) =>
    accessOf(plan, path).read || extra.some((mount) => mount.kind !== 'dir' && inside(path, mount.dest));
  const visible = (path: string) => visibleAt(linkName(path)) && visibleAt(realPath(path) ?? path);
  // Never bound as a side effect: a folder that is, holds or lies above one the sandbox hides.
  const hiddenRoots = [...privateRoots, ...THROWAWAY_ROOTS];
  const bindable = (dir: string) => !hiddenRoots.some((root) => inside(root, dir));
  const readOnlyFacts = {
    contested,
    hiddenRoots: linkRoots,
    write: false,
    shown: (real: string) => shownAsItself(plan.mounts, real),
    workspace,
  };
  const own = (mount: Omit<Mount, 'kind' | 'source'>, source: string) =>
    extra.push({ kind: 'ro', source, ...mount, priority: PRIORITY.own! });
  // Where a file the process starts from really is, or undefined (missing, or refused through a link).
  const startFile = (path: string, what: string) => {
    const resolved = resolveLinks(path);
    if (!resolved) return undefined;
    const refusal = linkRefusal(path, resolved, what, readOnlyFacts);
    if (refusal) refused.push(refusal);
    return refusal ? undefined : resolved.real;
  };
  // One file, read-only, where it is and under the name of the link that led to it (when that lies hidden).
  const bindFile = (path: string, real: string, rule: string, purpose: MountPurpose, bindReal = true) => {
    if (bindReal) own({ dest: real, rule, purpose }, real);
    const alias = linkName(path);
    const covered = extra.some((mount) => mount.kind !== 'dir' && inside(alias, mount.dest));
    if (alias !== real && !covered && accessOf(plan, dirname(alias)).throwaway)
      extra.push({ kind: 'link', dest: alias, source: real, rule, purpose, priority: PRIORITY.own! });
  };
  // A path the command line reaches through a link lying in a throwaway folder (/tmp/clone/dist -> /work/dist):
  // the link must exist inside too, or the process is handed a path it cannot open. Made after the binds, to a
  // target that is visible by then; startFile has already judged the whole walk (a refused link gets none).
  const linksOnTheWay = (path: string, rule: string) => {
    for (const link of resolveLinks(path)?.links ?? []) {
      const covered = extra.some((mount) => mount.kind !== 'dir' && inside(link.at, mount.dest));
      const target = realPath(link.at);
      if (covered || !target || !accessOf(plan, dirname(link.at)).throwaway || !visibleAt(target)) continue;
      extra.push({
        kind: 'link',
        dest: link.at,
        source: target,
        rule,
        purpose: 'program',
        priority: PRIORITY.own!,
      });
    }
  };
  for (const file of spec.programs ?? []) {
    if (visible(file)) {
      const throughThrowaway = resolveLinks(file)?.links.some(
        (link) => accessOf(plan, dirname(link.at)).throwaway,
      );
      if (throughThrowaway && startFile(file, 'the program'))
        linksOnTheWay(file, `a link on the way to the program ${file}`);
      continue;
    }
    // A program may be reached through a link in the workspace (node_modules/.bin): that is fine while it leads
    // to code; a link that turns it into a file of a private folder is refused.
    const real = startFile(file, 'the program');
    if (!real) continue;
    const rule = `the program file itself (${real}), read-only`;
    const found = packageRoot(real);
    if (found === undefined || !bindable(found)) {
      bindFile(file, real, rule, 'program');
      linksOnTheWay(file, `a link on the way to the program ${file}`);
      if (found !== undefined && found !== dirname(real))
        notes.push(
          `sandbox: only the program file ${real} is bound, not its package ${found}, which is or holds a folder the sandbox hides; name the package in the sandbox's read list if the program needs it`,
        );
      continue;
    }
    own({ dest: found, rule: `the program's own package (${found}), read-only`, purpose: 'program' }, found);
    // Reached through a link (~/.local/bin/x -> ../../tools/pkg/bin/x.js): the link's own name must exist too.
    bindFile(file, real, rule, 'program', false);
    linksOnTheWay(file, `a link on the way to the program ${file}`);
    // Its dependencies: Node resolves them in every node_modules above the package (npm hoists them to the top
    // one), so a program installed under a hidden folder (/tmp, a clone there) needs those bound too.
    for (let dir = dirname(found); dirname(dir) !== dir; dir = dirname(dir)) {
      const modules = join(dir, 'node_modules');
      if (modules === found || inside(modules, found) || !existsSync(modules) || visible(modules)) continue;
      if (!bindable(modules) || extra.some((mount) => mount.dest === modules)) continue;
      const real = realPath(modules);
      if (!real || real !== modules) continue; // a linked node_modules is not followed
      own(
        { dest: modules, rule: `the program's dependencies (${modules}), read-only`, purpose: 'program' },
        modules,
      );
    }
  }
  // The executable and the working folder must exist inside for the process to start at all (after the program:
  // a command that is a script was bound with its package there).
  for (const command of spec.executables ?? []) {
    if (!command || !isAbsolute(command) || visible(command)) continue;
    const real = startFile(command, 'the executable');
    if (!real) continue;
    bindFile(command, real, 'the executable itself, read-only', 'executable');
    if (privateRoots.some((root) => inside(real, root)))
      notes.push(
        `sandbox: the command ${command} lies in a folder the sandbox hides: it is bound alone (a script with its package), not the installation around it (nvm, volta, a venv's interpreter); name that folder in the sandbox's read list if it needs it`,
      );
  }
  for (const file of spec.fileArgs ?? []) {
    if (visible(file)) continue;
    notes.push(
      `sandbox: the argument ${file} is not visible inside (${accessOf(plan, file).mount.rule}); only the program is bound for the command line, so name it in the sandbox's read or write list if the server needs it`,
    );
  }
  // Made where the folder really is: bubblewrap cannot make a folder through a link.
  const cwd = realPath(spec.cwd) ?? spec.cwd;
  if (!visibleAt(cwd)) {
    extra.push({
      kind: 'dir',
      dest: cwd,
      rule: 'an empty stand-in for the working folder, which the policy hides',
      purpose: 'base',
      priority: PRIORITY.own!,
    });
  }
  // A link remade inside is needed only where no bind already shows the folder holding the host's own link (a
  // package's node_modules bound after the alias was planned holds `.bin/x` itself: bubblewrap would refuse).
  const binds = [...staged, ...extra].filter((mount) => mount.kind === 'ro' || mount.kind === 'rw');
  const kept = extra.filter(
    (mount) => mount.kind !== 'link' || !binds.some((bind) => inside(mount.dest, bind.dest)),
  );
  if (kept.length > 0) plan.mounts = order([...staged, ...kept]);
  return plan;
}

/**
 * Why `path` may not be bound where it leads, or undefined. Two rules, both about links:
 * - a link below a folder some sandboxed process may write (`contested`) may have been planted by that process:
 *   a writable bind is never resolved through one, a read-only one only when its target is already shown as
 *   itself (the read-only root; a bind of the same place), so the bind adds nothing;
 * - a link that leads into (or around) a folder the sandbox hides or replaces (`hiddenRoots`: the home folders,
 *   tack's folders, /tmp, /run, /proc, /dev) that the path as written does not lie in is refused wherever it lies.
 */
function linkRefusal(
  path: string,
  resolved: Resolution,
  rule: string,
  facts: {
    contested: readonly string[];
    hiddenRoots: ReadonlyArray<readonly string[]>;
    write: boolean;
    shown: (real: string) => boolean;
    workspace: readonly string[];
  },
): BindRefusal | undefined {
  if (resolved.links.length === 0) return undefined;
  const written = resolve(path);
  const planted = (): BindRefusal | undefined => {
    for (const link of resolved.links) {
      // Below the folder, not the folder itself: replacing a folder takes write access to the one holding it.
      const folder = facts.contested.find((dir) => link.at !== dir && inside(link.at, dir));
      if (folder !== undefined && (facts.write || !facts.shown(resolved.real)))
        return {
          path,
          rule,
          link: link.at,
          target: link.to,
          why: `the link lies in ${folder}, which a sandboxed process may write, so it may have planted it`,
        };
    }
    return undefined;
  };
  const intoHidden = (): BindRefusal | undefined => {
    // The workspace is the user's, wherever its path leads (a project folder linked into the home is still theirs).
    if (facts.workspace.some((dir) => inside(resolved.real, dir))) return undefined;
    const root = facts.hiddenRoots.find(
      (names) =>
        names.some((dir) => inside(resolved.real, dir) || inside(dir, resolved.real)) &&
        !names.some((dir) => inside(written, dir) || inside(dir, written)),
    );
    if (root === undefined) return undefined;
    const link = resolved.links[resolved.links.length - 1]!;
    const name = root.find((dir) => inside(resolved.real, dir) || inside(dir, resolved.real))!;
    return {
      path,
      rule,
      link: link.at,
      target: link.to,
      why: `it leads to ${resolved.real}, ${inside(name, resolved.real) ? 'which holds' : 'inside'} ${name}, which the sandbox hides`,
    };
  };
  // Both refuse; the first named is the one to act on: for a write, who could have planted the link; for a read,
  // the hidden folder it leads to (a venv's interpreter in ~/.pyenv wants a read rule, not a removed link).
  return facts.write ? (planted() ?? intoHidden()) : (intoHidden() ?? planted());
}

/** Whether the sandbox path `path` shows the host path of the same name: the root bind, or a bind of the same place. */
function shownAsItself(mounts: readonly Mount[], path: string): boolean {
  let decisive: Mount | undefined;
  for (const mount of mounts) if (inside(path, mount.dest)) decisive = mount;
  if (!decisive) return false;
  if (decisive.kind === 'root') return true;
  return (decisive.kind === 'ro' || decisive.kind === 'rw') && decisive.source === decisive.dest;
}

/**
 * Where each bind's host path lives, as tack's own mount table says: the device and the path inside it. The check
 * inside (identityCheck) compares the sandbox's own table with it, so whatever a link swapped in between planning
 * and mounting shows up as another root. Read when a process is launched, not when a plan is only looked at.
 */
export function boundIdentities(mounts: readonly Mount[]): BoundIdentity[] {
  const table = mountTable();
  const out: BoundIdentity[] = [];
  for (const mount of mounts) {
    if ((mount.kind !== 'ro' && mount.kind !== 'rw') || !mount.source) continue;
    // The mount serving a path is the last one made at or above it: a later mount over a parent covers a deeper
    // one made before it, and a deeper one made later sits on top (mountinfo lists mounts in the order made).
    let serving: MountTableEntry | undefined;
    for (const entry of table) if (inside(mount.source, entry.mountPoint)) serving = entry;
    out.push({
      dest: mount.dest,
      device: serving?.device ?? 'unknown',
      root: serving ? join(serving.root, relative(serving.mountPoint, mount.source)) : mount.source,
    });
  }
  return out;
}

/** One line of a mount table: the file system's device, the path inside it that is mounted, and where. */
export interface MountTableEntry {
  device: string;
  root: string;
  mountPoint: string;
}

/** A mount table (/proc/self/mountinfo; tack's own unless given), fields decoded, in the order mounts were made. */
export function mountTable(text = readMountinfo()): MountTableEntry[] {
  return text
    .split('\n')
    .map((line) => line.split(' '))
    .filter((fields) => fields.length > 5)
    .map((fields) => ({
      device: fields[2]!,
      root: decodeMountField(fields[3]!),
      mountPoint: decodeMountField(fields[4]!),
    }));
}

function readMountinfo(): string {
  try {
    return readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return '';
  }
}

/** mountinfo writes space, tab, newline and backslash as octal escapes. */
function decodeMountField(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

function encodeMountField(text: string): string {
  return text.replace(/[ \t\n\\]/g, (c) => `\\${c.charCodeAt(0).toString(8).padStart(3, '0')}`);
}

interface Resolution {
  /** Where the path leads, every link followed. */
  real: string;
  /** Each link met on the way: where it lies (its folder resolved) and what it says. */
  links: Array<{ at: string; to: string }>;
}

/**
 * Resolves `path` one component at a time, recording every link; undefined when something on the way is missing.
 * The path as given is normalised first (`a/../b` is `b`); a link's target is followed component by component, so
 * its `..` goes up from where the link led, as the kernel does. One walk gives both the links and the real path:
 * a second resolution (realpath) could see another state of a path a process is swapping.
 */
export function resolveLinks(path: string): Resolution | undefined {
  const links: Resolution['links'] = [];
  let queue = resolve(path).split('/').filter(Boolean);
  let current = '/';
  while (queue.length > 0) {
    const part = queue.shift()!;
    if (part === '.') continue;
    if (part === '..') {
      current = dirname(current);
      continue;
    }
    const next = join(current, part);
    let stat: ReturnType<typeof lstatSync>;
    try {
      stat = lstatSync(next);
    } catch {
      return undefined;
    }
    if (!stat.isSymbolicLink()) {
      current = next;
      continue;
    }
    if (links.length >= MAX_LINKS) return undefined;
    let target: string;
    try {
      target = readlinkSync(next);
    } catch {
      return undefined;
    }
    links.push({ at: next, to: target });
    if (target.startsWith('/')) current = '/';
    queue = target.split('/').filter(Boolean).concat(queue);
  }
  return { real: current, links };
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
    else if (mount.kind === 'link') args.push('--symlink', mount.source!, mount.dest);
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

/**
 * What the process may do with `path` (absolute, as seen inside): the last mount at or above it decides. Inside a
 * folder the sandbox replaces (a tmpfs, a stand-in), the folders bubblewrap makes on the way to a deeper mount
 * exist too, and writes there land in the throwaway folder.
 */
export function accessOf(plan: Pick<MountPlan, 'mounts'>, path: string): Access {
  let decisive = plan.mounts[0]!;
  let at = 0;
  plan.mounts.forEach((mount, index) => {
    if (inside(path, mount.dest)) {
      decisive = mount;
      at = index;
    }
  });
  const kind = decisive.kind;
  // A link made inside leads where the host's did: what lies there decides.
  if (kind === 'link') return accessOf(plan, join(decisive.source!, relative(decisive.dest, path)));
  const hidden = kind === 'hide' || kind === 'dir';
  const onTheWay =
    hidden && plan.mounts.slice(at + 1).some((mount) => mount.dest !== path && inside(mount.dest, path));
  return {
    read: !(hidden && path !== decisive.dest && !onTheWay),
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

/** `path` with every link resolved, or itself when it does not exist. */
export function realOrSelf(path: string): string {
  return realPath(path) ?? path;
}

function realPath(path: string): string | undefined {
  try {
    return realpathSync.native(path);
  } catch {
    return undefined;
  }
}

/**
 * Where a path's last component itself lies: its folder resolved, its own name kept. For a link that is where the
 * link file is, the one place a bind under the link's name can go (a mount point through a link fails).
 */
function linkName(path: string): string {
  const folder = dirname(resolve(path));
  return join(realPath(folder) ?? folder, basename(resolve(path)));
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

/** The folder a program file belongs to: the nearest above it with a package.json or node_modules, if any. */
function packageRoot(file: string): string | undefined {
  for (let dir = dirname(file); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) || existsSync(join(dir, 'node_modules'))) return dir;
    if (dirname(dir) === dir) return undefined;
  }
}

/** What the sandbox says on stderr when a bound path changed between planning and start. */
export const IDENTITY_MISMATCH =
  'tack sandbox: a path bound into the sandbox changed between planning and start (a link or folder swapped meanwhile); nothing was run';

/**
 * The command that runs first inside the sandbox, before the process's own: awk reads the sandbox's own
 * /proc/self/mountinfo and checks that the mount at each bind's place shows the planned device and root.
 * bubblewrap follows links when it mounts, so a process that swaps a planned folder (or any folder above it) for a
 * link between tack's planning and bubblewrap's mount would get the link's target bound; the kernel's table names
 * what was really mounted, whatever path led there, so the swap shows and the check exits 125 before anything else
 * runs. `/bin/sh` and awk come from the read-only root, awk by a fixed PATH (the process's own may name a folder a
 * sandboxed process writes); `exec` leaves the process in its place, same stdio and pid.
 */
export function identityCheck(identities: readonly BoundIdentity[]): string[] {
  if (identities.length === 0) return [];
  const wanted = identities
    .map((i) => `${i.device}\t${encodeMountField(i.root)}\t${encodeMountField(i.dest)}`)
    .join('\n');
  const script = `TACK_MOUNTS=${shellQuote(wanted)} PATH=/usr/bin:/bin awk ${shellQuote(MOUNT_CHECK)} /proc/self/mountinfo || { echo ${shellQuote(IDENTITY_MISMATCH)} >&2; exit 125; }; exec "$@"`;
  return ['/bin/sh', '-c', script, 'tack-sandbox'];
}

/** The awk program of identityCheck: the last mount at each place must show the wanted device and root. */
const MOUNT_CHECK = `BEGIN { n = split(ENVIRON["TACK_MOUNTS"], want, "\\n"); for (i = 1; i <= n; i++) { split(want[i], f, "\\t"); dev[i] = f[1]; root[i] = f[2]; at[i] = f[3] } }
{ for (i = 1; i <= n; i++) if ($5 == at[i]) got[i] = $3 " " $4 }
END { for (i = 1; i <= n; i++) if (got[i] != dev[i] " " root[i]) exit 1 }`;

function shellQuote(text: string): string {
  return `'${text.replaceAll("'", `'\\''`)}'`;
}
