import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { applyProjectTrust, projectTrustWarning } from '../../src/config/apply-trust.js';
import type { StdioServerConfig } from '../../src/config/load.js';
import { guaranteesOf } from '../../src/sandbox/guarantees.js';
import { prepareLaunch } from '../../src/sandbox/launch.js';
import { accessOf, bwrapArgs, planMounts } from '../../src/sandbox/mounts.js';
import type { ProjectTrustVerdict } from '../../src/security/project-trust.js';
import { fakeHome, LINUX } from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

const stdio = (config: { servers: unknown[] }, name: string) =>
  config.servers.find((s) => (s as { name: string }).name === name) as StdioServerConfig;

function project(files: Record<string, unknown>, userFile?: unknown) {
  const p = scope.project('tack-sandbox-policy-');
  const { home } = fakeHome(scope);
  p.env.HOME = home;
  p.env.TOKEN_DIR = '/opt/tokens';
  for (const [file, content] of Object.entries(files)) p.write(file, content);
  if (userFile !== undefined) {
    mkdirSync(p.home, { recursive: true });
    p.write('.tack-home/config.json', userFile);
  }
  return { p, home };
}

const server = { command: 'node', args: ['server.js'] };

/** A state folder is per server (or the skill scripts) and per project: `<name>@<12 hex of the project>`. */
const stateIn = (prefix: string) =>
  new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}@[0-9a-f]{12}$`);

describe('sandbox policies in tack.json', () => {
  it('resolves profiles, paths and defaults, each rule with where it was written', () => {
    const { p, home } = project({
      'tack.json': {
        sandbox: {
          profiles: {
            npm: { profile: 'workspace-write', network: ['registry.npmjs.org:443'], read: ['~/.npmrc'] },
            'npm-cache': { profile: 'npm', write: ['~/.npm'], home: false },
          },
          defaultForServers: 'read-only',
        },
        mcpServers: {
          inherits: server,
          none: { ...server, sandbox: false },
          named: { ...server, sandbox: 'npm-cache' },
          inline: {
            ...server,
            sandbox: { read: ['data', '${TOKEN_DIR}/public'], network: true, required: false },
          },
          remote: { url: 'http://127.0.0.1:1/mcp' },
        },
      },
    });
    const config = p.load();
    expect(stdio(config, 'inherits').sandbox).toMatchObject({
      profile: 'read-only',
      origin: 'sandbox.defaultForServers (tack.json)',
      read: [{ path: p.dir, written: '${workspace}', origin: 'profile read-only' }],
      write: [],
      network: false,
      home: false,
      required: true,
      workspace: p.dir,
      stateDir: expect.stringMatching(stateIn(join(p.home, 'state', 'sandbox', 'inherits'))),
    });
    expect(stdio(config, 'none').sandbox).toBeUndefined();
    // The same server name in another project has a state folder of its own (a cache one writes, the other runs).
    const other = project({
      'tack.json': { sandbox: { defaultForServers: 'read-only' }, mcpServers: { inherits: server } },
    });
    expect(stdio(other.p.load(), 'inherits').sandbox!.stateDir).not.toBe(
      stdio(config, 'inherits').sandbox!.stateDir,
    );
    expect(stdio(config, 'named').sandbox).toMatchObject({
      profile: 'npm-cache',
      origin: 'mcpServers.named.sandbox (tack.json)',
      // Lists add up along the chain, base first.
      read: [{ path: join(home, '.npmrc'), origin: 'sandbox.profiles.npm.read[0] (tack.json)' }],
      write: [
        { path: p.dir, origin: 'profile workspace-write' },
        { path: join(home, '.npm'), origin: 'sandbox.profiles.npm-cache.write[0] (tack.json)' },
      ],
      network: [
        {
          host: 'registry.npmjs.org',
          port: 443,
          subdomains: false,
          origin: 'sandbox.profiles.npm.network[0] (tack.json)',
        },
      ],
      homeOrigin: 'sandbox.profiles.npm-cache.home (tack.json)',
    });
    expect(stdio(config, 'inline').sandbox).toMatchObject({
      profile: 'read-only',
      read: [{ path: p.dir }, { path: join(p.dir, 'data') }, { path: '/opt/tokens/public' }],
      network: true,
      networkOrigin: 'mcpServers.inline.sandbox.network (tack.json)',
      required: false,
    });
    expect(config.servers.find((s) => s.name === 'remote')).not.toHaveProperty('sandbox');
    // Skill scripts: tack's default, preferred rather than required.
    expect(config.sandbox.skillScripts).toMatchObject({
      profile: 'workspace-write',
      required: false,
      origin: "tack's default for skill scripts",
      stateDir: expect.stringMatching(stateIn(join(p.home, 'state', 'sandbox', '.skill-scripts'))),
    });
  });

  it('refuses unknown and built-in profile names, cycles, bad host rules and unset variables, naming each place', () => {
    const problems = (tack: unknown) => {
      const { p } = project({ 'tack.json': tack });
      try {
        p.load();
      } catch (error) {
        const e = error as { message: string; details: string[] };
        return [e.message, ...e.details];
      }
      return [];
    };
    // A broken section is reported alone, not again at every server that names one of its profiles.
    expect(
      problems({
        sandbox: { profiles: { 'read-only': { network: true } }, skillScripts: { network: ['example.com'] } },
        mcpServers: { s: { ...server, sandbox: 'mine' } },
      }),
    ).toEqual([
      'tack.json: sandbox.profiles.read-only: "read-only" is a built-in profile; give yours another name',
      'tack.json: sandbox.skillScripts.network[0]: expected host:port, e.g. "api.example.com:443", got "example.com"',
    ]);
    const found = problems({
      sandbox: { profiles: { a: { profile: 'b' }, b: { profile: 'a' }, off: { profile: 'none' } } },
      mcpServers: {
        typo: { ...server, sandbox: 'workspace-wirte' },
        loop: { ...server, sandbox: 'a' },
        off: { ...server, sandbox: 'off' },
        vars: { ...server, sandbox: { write: ['${NOT_SET_ANYWHERE}/x'] } },
      },
    });
    expect(found).toContain(
      'tack.json: mcpServers.typo.sandbox: unknown sandbox profile "workspace-wirte" (known: "none", "read-only", "workspace-write", "package-runner", "a", "b", "off")',
    );
    expect(found).toContain(
      'tack.json: sandbox.profiles.b.profile: profile "a" extends itself (a -> b -> a)',
    );
    expect(found).toContain(
      'tack.json: sandbox.profiles.off.profile: a profile cannot start from "none": use false where no sandbox is meant',
    );
    expect(found).toContain(
      'tack.json: mcpServers.vars.sandbox.write[0]: uses ${NOT_SET_ANYWHERE}, which is not set',
    );
  });

  it('sets an untrusted project’s sandbox section aside: it could loosen the user’s own servers and scripts', () => {
    const { p } = project(
      {
        'tack.json': {
          sandbox: { defaultForServers: 'none', skillScripts: false, profiles: { mine: { network: true } } },
          mcpServers: { project: server },
        },
      },
      { sandbox: { defaultForServers: 'workspace-write' }, mcpServers: { user: server } },
    );
    const loaded = p.load();
    // Trusted (the project's word counts): no sandbox for either, none for scripts.
    expect(stdio(loaded, 'user').sandbox).toBeUndefined();
    expect(loaded.sandbox.skillScripts).toBeUndefined();
    const verdict = {
      trusted: false,
      neverTrusted: true,
      root: p.dir,
      files: ['tack.json'],
      changed: [],
      changes: [],
      skillRoots: [],
    } as unknown as ProjectTrustVerdict;
    const held = applyProjectTrust(loaded, verdict);
    expect(stdio(held, 'user').sandbox).toMatchObject({
      profile: 'workspace-write',
      origin: 'sandbox.defaultForServers (config.json)',
    });
    expect(held.sandbox.skillScripts).toMatchObject({ origin: "tack's default for skill scripts" });
    expect(stdio(held, 'project').enabled).toBe(false);
    expect(projectTrustWarning(held)).toContain('its sandbox settings');
  });
});

describe('the mount plan', () => {
  const policyFor = (sandbox: unknown, extra: Record<string, unknown> = {}) => {
    const { p, home } = project({ 'tack.json': { mcpServers: { s: { ...server, sandbox, ...extra } } } });
    return { p, home, policy: stdio(p.load(), 's').sandbox! };
  };

  it('orders mounts shallow to deep, hides home and tack’s folders, and answers for any path', () => {
    const { p, home, policy } = policyFor({ profile: 'workspace-write', read: ['~/.gitconfig-dir'] });
    mkdirSync(join(home, '.gitconfig-dir'));
    mkdirSync(policy.stateDir, { recursive: true });
    const plan = planMounts(policy, { cwd: p.dir, stateDir: policy.stateDir });
    const args = bwrapArgs(plan);
    const at = (flag: string, path: string) => args.findIndex((a, i) => a === flag && args[i + 1] === path);
    expect(args).toContain('--unshare-net');
    expect(at('--tmpfs', home)).toBeGreaterThan(at('--tmpfs', '/tmp'));
    expect(at('--ro-bind', join(home, '.gitconfig-dir'))).toBeGreaterThan(at('--tmpfs', home));
    // TACK_HOME lies inside this workspace: hidden after the workspace is bound, its own state bound after that.
    expect(at('--tmpfs', p.home)).toBeGreaterThan(at('--bind', p.dir));
    expect(at('--bind', policy.stateDir)).toBeGreaterThan(at('--tmpfs', p.home));
    expect(args.slice(-3)).toEqual(['--chdir', p.dir, '--']);

    expect(accessOf(plan, join(home, '.ssh', 'id_rsa'))).toMatchObject({
      read: false,
      mount: { kind: 'hide' },
    });
    expect(accessOf(plan, join(home, '.gitconfig-dir', 'x'))).toMatchObject({ read: true, write: false });
    expect(accessOf(plan, join(p.dir, 'src', 'a.ts'))).toMatchObject({
      read: true,
      write: true,
      throwaway: false,
    });
    expect(accessOf(plan, join(p.home, 'state', 'tack.db'))).toMatchObject({ read: false });
    expect(accessOf(plan, '/usr/bin/env')).toMatchObject({
      read: true,
      write: false,
      mount: { kind: 'root' },
    });
    expect(accessOf(plan, '/tmp/elsewhere')).toMatchObject({ read: false, throwaway: true });
    // A path in the home folder counts as private: the guard is told so. (This home lies under the host's /tmp,
    // so the bind also shows a piece of it: no "no network" either.)
    expect(guaranteesOf(plan)).toMatchObject({ noNetwork: false, noPrivateFiles: false });
    expect(guaranteesOf(plan).files).toContain(
      `${join(home, '.gitconfig-dir')} is readable (read: ~/.gitconfig-dir`,
    );
  });

  it('refuses a rule that resolves through a link a sandboxed process could have planted', () => {
    // Defect 2 of issue 27: a skill script (workspace-write by default) runs `rmdir out && ln -s "$HOME" out`;
    // the next start of a server with write: ${workspace}/out would have bound the home folder writable.
    const { p, home, policy } = policyFor({ profile: 'read-only', write: ['${workspace}/out'] });
    symlinkSync(home, join(p.dir, 'out'));
    const plan = planMounts(policy, { cwd: p.dir, stateDir: policy.stateDir });
    expect(plan.refused).toEqual([
      expect.objectContaining({
        path: join(p.dir, 'out'),
        link: join(p.dir, 'out'),
        target: home,
        why: expect.stringContaining('which a sandboxed process may write'),
      }),
    ]);
    expect(bwrapArgs(plan).join(' ')).not.toContain(`--bind ${home} `);
    // Outside every folder a sandbox writes, a link that leads into the home folder is refused all the same.
    const elsewhere = mkdtempSync(join(tmpdir(), 'tack-link-elsewhere-'));
    scope.defer(() => rmSync(elsewhere, { recursive: true, force: true }));
    const reader = policyFor({ read: [join(elsewhere, 'keys')] });
    symlinkSync(join(reader.home, '.ssh'), join(elsewhere, 'keys'));
    const { refused } = planMounts(reader.policy, { cwd: reader.p.dir, stateDir: reader.policy.stateDir });
    expect(refused.map((r) => r.why)).toEqual([
      expect.stringContaining(`inside ${reader.home}, which the sandbox hides`),
    ]);
  });

  it('skips what does not exist and what lies inside tack’s own folders, and stands in for a hidden cwd', () => {
    const { p, home, policy } = policyFor({ write: ['missing-folder', `${join('.tack-home', 'state')}`] });
    const cwd = join(home, 'servers');
    mkdirSync(cwd);
    mkdirSync(join(p.home, 'state'), { recursive: true });
    const plan = planMounts(policy, { cwd, stateDir: policy.stateDir });
    expect(plan.skipped.map((s) => `${s.path}: ${s.why}`)).toEqual([
      `${join(p.dir, 'missing-folder')}: it does not exist`,
      `${join(p.dir, '.tack-home', 'state')}: it is inside tack's own folders, which stay hidden`,
      `${policy.stateDir}: it does not exist`,
    ]);
    expect(plan.mounts).toContainEqual(expect.objectContaining({ kind: 'dir', dest: cwd }));
  });

  it('binds a program installed under a hidden folder with the node_modules its dependencies resolve from', () => {
    const { home, policy } = policyFor({});
    const app = join(home, 'app');
    const pkg = join(app, 'node_modules', '@scope', 'server');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    mkdirSync(join(app, 'node_modules', 'dependency'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{}');
    writeFileSync(join(pkg, 'dist', 'index.js'), '');
    writeFileSync(join(app, 'secret.txt'), 'private');
    const plan = planMounts(policy, {
      cwd: app,
      stateDir: policy.stateDir,
      programs: [join(pkg, 'dist', 'index.js')],
    });
    expect(accessOf(plan, join(pkg, 'dist', 'index.js')).read).toBe(true);
    expect(accessOf(plan, join(app, 'node_modules', 'dependency', 'index.js'))).toMatchObject({
      read: true,
      write: false,
    });
    // Only the packages: the folder that holds them stays hidden.
    expect(accessOf(plan, join(app, 'secret.txt')).read).toBe(false);
  });
});

describe.runIf(LINUX)('a symlinked rule in a real sandbox', () => {
  it('writes where a link no sandbox could have planted leads, under both names', async () => {
    const p = scope.project('tack-sandbox-link-');
    const real = mkdtempSync(join(tmpdir(), 'tack-link-target-'));
    const links = mkdtempSync(join(tmpdir(), 'tack-link-folder-'));
    scope.defer(() => rmSync(real, { recursive: true, force: true }));
    scope.defer(() => rmSync(links, { recursive: true, force: true }));
    symlinkSync(real, join(links, 'out'));
    p.write('tack.json', { mcpServers: { s: { ...server, sandbox: { write: [join(links, 'out')] } } } });
    const policy = stdio(p.load(), 's').sandbox!;
    const launch = await prepareLaunch(policy, {
      command: 'sh',
      args: ['-c', `echo via-link > ${join(links, 'out', 'a')} && echo direct > ${join(real, 'b')}`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: p.dir,
      subject: 'test',
      note: () => {},
    });
    const code = await new Promise<number | null>((resolve) =>
      spawn(launch.command, launch.args, { env: launch.env, cwd: launch.cwd, stdio: 'ignore' }).once(
        'exit',
        resolve,
      ),
    );
    await launch.close();
    expect(code).toBe(0);
    expect(readFileSync(join(real, 'a'), 'utf8')).toBe('via-link\n');
    expect(readFileSync(join(real, 'b'), 'utf8')).toBe('direct\n');
  });
});
