import { spawn } from 'node:child_process';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { SandboxPathRule, SandboxPolicy } from '../../src/config/sandbox.js';
import { TackError } from '../../src/errors.js';
import { parseBwrapArgs } from '../../src/sandbox/guarantees.js';
import { prepareLaunch } from '../../src/sandbox/launch.js';
import { accessOf, inside } from '../../src/sandbox/mounts.js';
import { LINUX, readOnlyRootDir } from '../helpers/sandbox.js';

/**
 * Issue 27's property: for random policies and file layouts (links inside and outside the workspace and the home
 * folder, programs in the home folder, in ~/.local/bin, in a package, file arguments, projects under /tmp and in the
 * home folder), each started for real under bubblewrap with a probe in the process's exact sandbox, everything the
 * probe reads or writes on the host lies inside what the guarantees claim (`exposed`, the writable binds of the
 * arguments), nothing of the home or tack's folders is reached when the guarantees say "no private files", and the
 * plan's own answer for a path (accessOf, what `tack sandbox check` and the refusal messages use) is what the probe
 * saw. Seeded: a failure names its seed and case, and runs again the same with TACK_PROPERTY_SEED.
 */

const CASES = Number(process.env.TACK_PROPERTY_CASES ?? 300);
const SEED = Number(process.env.TACK_PROPERTY_SEED ?? 27);

function rng(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!,
    some: <T>(items: readonly T[], p: number): T[] => items.filter(() => next() < p),
  };
}

interface Layout {
  root: string;
  home: string;
  workspace: string;
  tack: string;
  /** Each file's unique content -> its host path. */
  tokens: Map<string, string>;
  cleanup: string[];
}

/** A file whose content names it, so a read through any path tells which host file it reached. */
function file(layout: Layout, path: string) {
  mkdirSync(dirname(path), { recursive: true });
  const token = `F${layout.tokens.size}-${Math.random().toString(36).slice(2, 8)}`;
  layout.tokens.set(token, path);
  writeFileSync(path, token);
}

function build(r: ReturnType<typeof rng>): Layout {
  // Under /var/tmp: on the read-only root, neither the private /tmp nor a home folder, so "outside" is plainly visible.
  const root = mkdtempSync(join(readOnlyRootDir(), 'tack-prop-'));
  const home = join(root, 'home');
  // Sometimes the home folder is a link, as /home -> /var/home on Silverblue and CoreOS.
  if (r.chance(0.25)) {
    mkdirSync(join(root, 'var-home'));
    symlinkSync(join(root, 'var-home'), home);
  }
  const tack = join(home, '.tack');
  const where = r.pick(['plain', 'tmp', 'in-home'] as const);
  let workspace = join(root, 'ws');
  const cleanup = [root];
  if (where === 'tmp') {
    const base = mkdtempSync(join(tmpdir(), 'tack-prop-ws-'));
    cleanup.push(base);
    workspace = join(base, 'nested', 'ws');
  } else if (where === 'in-home') workspace = join(home, 'projects', 'ws');
  const layout: Layout = { root, home, workspace, tack, tokens: new Map(), cleanup };
  for (const f of ['.ssh/id_rsa', '.aws/credentials', 'secret.txt', 'notes.db', 'mini-server.mjs'])
    file(layout, join(home, f));
  file(layout, join(home, '.local/bin/tool.js'));
  file(layout, join(home, 'code/pkg/index.js'));
  file(layout, join(home, 'code/pkg/.env'));
  writeFileSync(join(home, 'code/pkg/package.json'), '{}');
  if (r.chance(0.3)) writeFileSync(join(home, 'package.json'), '{}'); // must never unhide the home
  file(layout, join(tack, 'config', 'config.json'));
  file(layout, join(tack, 'state', 'tack.db'));
  file(layout, join(workspace, 'README.md'));
  file(layout, join(workspace, 'sub', 'data.txt'));
  file(layout, join(workspace, 'node_modules', 'srv', 'index.js'));
  writeFileSync(join(workspace, 'node_modules', 'srv', 'package.json'), '{}');
  file(layout, join(root, 'outside', 'shared.txt'));
  file(layout, join(root, 'outside', 'pkg', 'main.js'));
  writeFileSync(join(root, 'outside', 'pkg', 'package.json'), '{}');
  mkdirSync(join(workspace, 'out'), { recursive: true });
  // Links, as a user or a planted process would leave them.
  const targets = [
    home,
    join(home, '.ssh'),
    join(root, 'outside'),
    join(workspace, 'sub'),
    tack,
    '/proc/self',
  ];
  for (const name of r.some(['lnk-a', 'lnk-b'], 0.5)) symlinkSync(r.pick(targets), join(workspace, name));
  if (r.chance(0.3)) {
    rmSync(join(workspace, 'out'), { recursive: true });
    symlinkSync(r.pick(targets), join(workspace, 'out')); // the planted link of defect 2
  }
  if (r.chance(0.4)) symlinkSync(r.pick(targets), join(root, 'outside', 'lnk'));
  mkdirSync(join(workspace, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(
    r.pick(['../srv/index.js', join(home, 'mini-server.mjs'), join(home, '.ssh', 'id_rsa')]),
    join(workspace, 'node_modules', '.bin', 'srv'),
  );
  return layout;
}

function policyFor(r: ReturnType<typeof rng>, layout: Layout): SandboxPolicy {
  const { workspace, home, root, tack } = layout;
  const rule = (path: string): SandboxPathRule => ({ path, written: path, origin: 'property test' });
  const candidates = [
    join(workspace, 'sub'),
    join(workspace, 'out'),
    join(workspace, 'lnk-a'),
    join(root, 'outside'),
    join(root, 'outside', 'lnk'),
    join(home, 'code'),
    join(home, '.ssh'),
    join(root, 'missing'),
    join(tack, 'state'),
  ];
  const profile = r.pick(['read-only', 'workspace-write'] as const);
  const read = [...(profile === 'read-only' ? [rule(workspace)] : []), ...r.some(candidates, 0.15).map(rule)];
  const write = [
    ...(profile === 'workspace-write' ? [rule(workspace)] : []),
    ...r.some(candidates, 0.15).map(rule),
  ];
  const stateDir = join(tack, 'state', 'sandbox', 's');
  mkdirSync(stateDir, { recursive: true });
  return {
    profile,
    origin: 'property test',
    network: false,
    networkOrigin: '',
    read,
    write,
    home: r.chance(0.08),
    homeOrigin: 'property test',
    required: true,
    workspace,
    homes: [home],
    stateDir,
    hidden: [join(tack, 'config'), join(tack, 'state')],
    // The skill scripts' default: the workspace writable; and this policy's own writes.
    writableBySandboxes: [workspace, ...write.map((w) => w.path), stateDir],
  };
}

function commandLine(r: ReturnType<typeof rng>, layout: Layout): { command: string; args: string[] } {
  const { home, workspace, root } = layout;
  return r.pick([
    { command: 'sh', args: ['-c', 'true'] },
    { command: 'node', args: [join(home, 'mini-server.mjs')] },
    { command: 'node', args: [join(home, 'mini-server.mjs'), '--db', join(home, 'notes.db')] },
    { command: 'node', args: [join(home, '.local/bin/tool.js')] },
    { command: 'node', args: [join(home, 'code/pkg/index.js')] },
    { command: 'node', args: ['--no-warnings', join(workspace, 'node_modules', '.bin', 'srv')] },
    { command: 'node', args: [join(root, 'outside', 'pkg', 'main.js'), join(home, 'secret.txt')] },
    { command: join(home, '.local/bin/tool.js'), args: [] },
  ]);
}

/** Every path a process could name: the layout walked through its links (bounded), files and folders. */
function candidates(layout: Layout): { files: string[]; dirs: string[] } {
  const files = new Set<string>();
  const dirs = new Set<string>();
  const walk = (dir: string, depth: number) => {
    if (depth > 5 || dirs.size > 400) return;
    dirs.add(dir);
    let entries: string[];
    try {
      entries = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of entries) {
      const path = join(dir, name);
      let stat: ReturnType<typeof statSync>;
      try {
        stat = statSync(path);
      } catch {
        continue;
      }
      let real: string;
      try {
        real = realpathSync(path);
      } catch {
        continue;
      }
      // Named in the layout, never walked: /proc/self leads into every process's open files.
      if (['/proc', '/dev', '/sys'].some((system) => inside(real, system))) {
        if (stat.isDirectory()) dirs.add(path);
        continue;
      }
      if (stat.isDirectory()) walk(path, depth + 1);
      else if (stat.isFile()) files.add(path);
    }
  };
  walk(layout.root, 0);
  walk(layout.workspace, 0);
  return { files: [...files], dirs: [...dirs] };
}

const PROBE = `m="$1"; shift; mode=r
for p in "$@"; do
  if [ "$p" = "--writes" ]; then mode=w; continue; fi
  if [ $mode = r ]; then
    if c=$(cat -- "$p" </dev/null 2>/dev/null); then printf 'R\\t%s\\t%s\\n' "$p" "$c"; fi
  else
    if (echo "$m" > "$p/.w-$m") 2>/dev/null; then printf 'W\\t%s\\n' "$p"; fi
  fi
done`;

function runProbe(command: string, args: string[], env: Record<string, string>, cwd: string) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(command, args, { env, cwd, timeout: 20_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => {
      stdout += chunk;
    });
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

function realOrUndefined(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/** Host files named `.w-<marker>`: where the probe's writes landed. */
function landed(dirs: readonly string[], marker: string): string[] {
  const found = new Set<string>();
  for (const dir of dirs) {
    try {
      const path = join(dir, `.w-${marker}`);
      if (lstatSync(path).isFile()) found.add(dirname(realpathSync(path)));
    } catch {
      // nothing landed there
    }
  }
  return [...found];
}

describe.runIf(LINUX)('sandbox property: what the process reaches is what tack claims', () => {
  it(`holds for ${CASES} seeded cases (seed ${SEED})`, async () => {
    const r = rng(SEED);
    const tally = {
      started: 0,
      refused: 0,
      refusedPlanted: 0,
      refusedIntoHidden: 0,
      readsPrivate: 0,
      exposedClaims: 0,
    };
    const failures: string[] = [];
    for (let n = 0; n < CASES && failures.length < 5; n++) {
      const layout = build(r);
      try {
        const policy = policyFor(r, layout);
        const line = commandLine(r, layout);
        const where = `case ${n} (seed ${SEED}): ${JSON.stringify({ line, read: policy.read.map((x) => x.path), write: policy.write.map((x) => x.path), home: policy.home, workspace: layout.workspace })}`;
        let launch: Awaited<ReturnType<typeof prepareLaunch>>;
        try {
          launch = await prepareLaunch(policy, {
            ...line,
            env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: layout.home },
            cwd: layout.workspace,
            subject: `case ${n}`,
            note: () => {},
          });
        } catch (error) {
          if (TackError.isInstance(error) && error.code === 'SANDBOX_REFUSED') {
            tally.refused++;
            if (error.message.includes('which a sandboxed process may write')) tally.refusedPlanted++;
            else if (error.message.includes('which the sandbox hides')) tally.refusedIntoHidden++;
            else failures.push(`${where}: refused for another reason: ${error.message}`);
            continue;
          }
          throw error;
        }
        tally.started++;
        const plan = launch.plan!;
        const guarantees = launch.status.state === 'enforced' ? launch.status.guarantees : undefined;
        expect(guarantees, where).toBeDefined();
        const marker = `m${n}${Math.random().toString(36).slice(2, 8)}`;
        const { files, dirs } = candidates(layout);
        const args = launch.wrap(['/bin/sh', '-c', PROBE, 'probe', marker, ...files, '--writes', ...dirs]);
        const result = await runProbe(launch.command, args, launch.env, launch.cwd);
        await launch.close();
        if (result.code !== 0) {
          failures.push(`${where}: the probe exited ${result.code}: ${result.stderr.slice(0, 300)}`);
          continue;
        }
        const enforced = parseBwrapArgs(args.slice(0, args.indexOf('--') + 1));
        const privateRoots = [...plan.homes, ...plan.tackDirs];
        const claimed = guarantees!.exposed;
        if (new Set(claimed.map((e) => `${e.path} ${e.at}`)).size !== claimed.length)
          failures.push(`${where}: a reachable path is listed twice`);
        tally.exposedClaims += claimed.filter((e) => e.private).length;
        for (const row of result.stdout.split('\n').filter((l) => l.startsWith('R\t'))) {
          const [, path, token] = row.split('\t') as [string, string, string];
          const host = layout.tokens.get(token);
          if (!host) continue;
          // The plan's own answer (what sandbox check and the refusal messages say) for a path without links.
          if (realpathSync(path) === path && path === host && !accessOf(plan, path).read)
            failures.push(`${where}: the plan says ${path} is not visible, the probe read it`);
          if (!privateRoots.some((root) => inside(host, root))) continue;
          tally.readsPrivate++;
          if (!claimed.some((e) => inside(host, e.path)))
            failures.push(`${where}: read ${host} (as ${path}), which the guarantees do not list`);
          else if (guarantees!.noPrivateFiles && claimed.some((e) => e.private && inside(host, e.path)))
            failures.push(`${where}: read private ${host} while the guarantees say no private files`);
        }
        const rwSources = enforced.mounts
          .filter((m) => m.flag === '--bind')
          .map((m) => realpathSync(m.source!));
        for (const dir of landed(dirs, marker)) {
          if (!rwSources.some((source) => inside(dir, source)))
            failures.push(`${where}: a write landed in ${dir}, outside every writable bind`);
          if (
            privateRoots.some((root) => inside(dir, root)) &&
            !claimed.some((e) => e.write && inside(dir, e.path))
          )
            failures.push(
              `${where}: a write landed in private ${dir}, which the guarantees do not list as writable`,
            );
        }
        // What the policy hides stays unread, claimed or not: the secrets of the home folder are reached only when
        // a rule names them (where it leads) or home: true shows the home.
        const named = (host: string) =>
          policy.home ||
          [...policy.read, ...policy.write].some((rule) => {
            const real = realOrUndefined(rule.path);
            return real !== undefined && inside(host, real);
          });
        for (const secret of ['.ssh/id_rsa', '.aws/credentials', 'secret.txt']) {
          const host = join(layout.home, secret);
          const token = [...layout.tokens].find(([, path]) => path === host)![0];
          if (result.stdout.includes(`\t${token}\n`) && !named(realpathSync(host)))
            failures.push(`${where}: read ${host}, which no rule names`);
        }
      } finally {
        for (const dir of layout.cleanup) rmSync(dir, { recursive: true, force: true });
      }
    }
    expect(failures).toEqual([]);
    // The cases must exercise both outcomes, or the property proves little.
    expect(tally.started).toBeGreaterThan(CASES / 3);
    expect(tally.refused).toBeGreaterThan(CASES / 20);
    expect(tally.readsPrivate).toBeGreaterThan(0);
    console.info(`sandbox property: ${JSON.stringify(tally)}`);
  }, 300_000);
});
