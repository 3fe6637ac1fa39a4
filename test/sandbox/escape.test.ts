import { spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { StdioServerConfig } from '../../src/config/load.js';
import type { SandboxPolicy } from '../../src/config/sandbox.js';
import { guaranteesOf } from '../../src/sandbox/guarantees.js';
import { prepareLaunch } from '../../src/sandbox/launch.js';
import { bwrapArgs, IDENTITY_MISMATCH, inside, planMounts } from '../../src/sandbox/mounts.js';
import { tack } from '../helpers/cli.js';
import { fixture } from '../helpers/project.js';
import { FAKE_KEY, fakeHome, LINUX, RUNS_AS_ROOT, readOnlyRootDir } from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

/** Runs a launch to its end: exit code and stderr. */
async function run(launch: { command: string; args: string[]; env: Record<string, string>; cwd: string }) {
  return new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(launch.command, launch.args, { env: launch.env, cwd: launch.cwd });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    child.stdout.resume();
    child.once('close', (code) => resolve({ code, stderr }));
  });
}

function project(prefix = 'tack-sandbox-escape-') {
  const p = scope.project(prefix);
  const { home, key } = fakeHome(scope);
  p.env.HOME = home;
  return { p, home, key };
}

describe.runIf(LINUX)('the sandbox against what it contains (issue 27)', () => {
  it('a program and a file argument directly in the home folder bind those files, never the home', async () => {
    const { p, home, key } = project();
    // The program lies directly in the home folder; it loads the real fixture server from the checkout.
    const program = join(home, 'mini-server.mjs');
    writeFileSync(program, `await import(${JSON.stringify(fixture('sandbox-server.js'))});\n`);
    const notes = join(home, 'notes.db');
    writeFileSync(notes, 'private notes');
    p.write('tack.json', {
      mcpServers: {
        mini: { command: 'node', args: [program, '--db', notes], sandbox: 'read-only' },
      },
    });
    const read = async (path: string) =>
      tack(['call', 'mcp__mini__read_file', JSON.stringify({ path })], { cwd: p.dir, env: p.env });
    const keyRead = await read(key);
    expect(keyRead.stdout).not.toContain(FAKE_KEY.trim());
    expect(keyRead.stdout).toContain('ENOENT');
    // A file argument is data, not the program: it is not bound, and tack says how to allow it.
    const notesRead = await read(notes);
    expect(notesRead.stdout).toContain('ENOENT');
    expect(`${notesRead.stdout}${notesRead.stderr}`).toContain(`the argument ${notes} is not visible inside`);

    // The guarantees come from the arguments bubblewrap got: the program file is named, the home is not "hidden".
    const servers = JSON.parse((await tack(['servers', '--json'], { cwd: p.dir, env: p.env })).stdout);
    const guarantees = servers.find((s: { name: string }) => s.name === 'mini').sandbox.guarantees;
    expect(guarantees.noPrivateFiles).toBe(false);
    // Under root the process is uid 0: the guarantees say so instead of "no private files".
    expect(guarantees.files.includes('tack runs as root')).toBe(RUNS_AS_ROOT);
    expect(guarantees.files).toContain(
      `${program} is readable (the program file itself (${program}), read-only)`,
    );
    expect(guarantees.files).not.toContain(`${home} is readable`);
    expect(guarantees.exposed.map((e: { path: string }) => e.path)).not.toContain(home);

    const check = await tack(['sandbox', 'check', 'mini'], { cwd: p.dir, env: p.env });
    expect(check.code).toBe(0);
    expect(check.stdout).toMatch(new RegExp(`read\\s+${key} \\(SSH keys\\)\\s+hidden\\s+hidden`));
    expect(check.stdout).toMatch(new RegExp(`read\\s+${notes} \\([a-z ]+\\)\\s+hidden\\s+hidden`));
    expect(check.stdout).toMatch(
      new RegExp(`mount\\s+${program} \\(read-only bind\\)\\s+as planned\\s+as planned`),
    );
    expect(check.stdout).toContain('Every check agrees with the policy.');
  }, 60_000);

  it('a link one sandboxed process plants does not turn another policy’s path into the home folder', async () => {
    const { p, home } = project();
    mkdirSync(join(p.dir, 'out'));
    p.write('tack.json', {
      mcpServers: {
        writer: {
          command: process.execPath,
          args: [fixture('sandbox-server.js')],
          sandbox: { profile: 'read-only', write: ['${workspace}/out'] },
        },
      },
    });
    const config = p.load();
    const scripts = config.sandbox.skillScripts!;
    // Process A: a skill script in the default sandbox (the workspace writable) plants the link.
    const planter = await prepareLaunch(scripts, {
      command: 'sh',
      args: ['-c', `rmdir out && ln -s ${home} out`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: p.dir,
      subject: 'skill script',
      note: () => {},
    });
    expect((await run(planter)).code).toBe(0);
    await planter.close();
    expect(readFileSync(join(p.dir, 'out', '.ssh', 'id_rsa'), 'utf8')).toBe(FAKE_KEY); // the link is there

    // Process B's next start is refused, naming the rule, the link and where it leads.
    const servers = await tack(['servers'], { cwd: p.dir, env: p.env });
    expect(servers.stdout).toMatch(/^writer\s+stdio\s+failed/m);
    expect(servers.stdout).toContain(
      `server "writer" was not started: ${join(p.dir, 'out')} (write: \${workspace}/out (mcpServers.writer.sandbox.write[0] (tack.json))) resolves through the link ${join(p.dir, 'out')} -> ${home}`,
    );
    expect(servers.stdout).toContain('which a sandboxed process may write');
    const call = await tack(
      ['call', 'mcp__writer__write_file', JSON.stringify({ path: join(p.dir, 'out', '.bashrc'), text: 'x' })],
      { cwd: p.dir, env: p.env },
    );
    expect(call.code).not.toBe(0);
    expect(existsSync(join(home, '.bashrc'))).toBe(false);
  }, 60_000);

  it('a folder swapped for a link between planning and start is caught inside before the command runs', async () => {
    const { p, home } = project();
    const out = join(p.dir, 'out');
    mkdirSync(out);
    // Outside every hidden folder, so bubblewrap itself would mount it: only the check inside can tell.
    const victim = mkdtempSync(join(readOnlyRootDir(), 'tack-victim-'));
    scope.defer(() => rmSync(victim, { recursive: true, force: true }));
    p.write('tack.json', {
      mcpServers: { s: { command: 'sh', args: [], sandbox: { write: ['${workspace}/out'] } } },
    });
    const policy = (p.load().servers.find((s) => s.name === 's') as StdioServerConfig).sandbox!;
    const start = () =>
      prepareLaunch(policy, {
        command: 'sh',
        args: ['-c', `echo ran > ${join(out, 'ran')}`],
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
        cwd: p.dir,
        subject: 'test',
        note: () => {},
      });
    const swapped = async (target: string) => {
      const launch = await start();
      // The race, won by the attacker on purpose: the planned folder becomes a link.
      renameSync(out, join(p.dir, 'out.old'));
      symlinkSync(relative(p.dir, target), out);
      const result = await run(launch);
      await launch.close();
      rmSync(out);
      renameSync(join(p.dir, 'out.old'), out);
      return result;
    };
    const toVictim = await swapped(victim);
    expect(toVictim.stderr).toContain(IDENTITY_MISMATCH);
    expect(toVictim.code).toBe(125);
    expect(existsSync(join(victim, 'ran'))).toBe(false);
    // Into the home folder bubblewrap fails on its own (the hidden home has no such mount point): closed too.
    const toHome = await swapped(home);
    expect(toHome.code).not.toBe(0);
    expect(existsSync(join(home, 'ran'))).toBe(false);
    // The control: without the swap the same plan runs.
    const plain = await run(await start());
    expect(plain).toMatchObject({ code: 0, stderr: '' });
    expect(readFileSync(join(out, 'ran'), 'utf8')).toBe('ran\n');
  }, 60_000);

  it('tack sandbox check agrees with a project under /tmp, and says when no server has a sandbox', async () => {
    const base = mkdtempSync(join(tmpdir(), 'tack-nested-'));
    scope.defer(() => rmSync(base, { recursive: true, force: true }));
    const { p } = project();
    const dir = join(base, 'project');
    mkdirSync(dir);
    writeFileSync(
      join(dir, 'tack.json'),
      JSON.stringify({
        mcpServers: {
          boxed: {
            command: process.execPath,
            args: [fixture('sandbox-server.js')],
            sandbox: 'workspace-write',
          },
        },
      }),
    );
    const check = await tack(['sandbox', 'check'], { cwd: dir, env: p.env });
    expect(check.stdout).toMatch(
      new RegExp(`write\\s+${base} \\(outside the workspace\\)\\s+throwaway\\s+throwaway`),
    );
    expect(check.stdout).not.toContain('MISMATCH');
    expect(check.code).toBe(0);

    writeFileSync(join(dir, 'tack.json'), JSON.stringify({ mcpServers: {} }));
    const scriptsOnly = await tack(['sandbox', 'check'], { cwd: dir, env: p.env });
    expect(scriptsOnly.code).toBe(0);
    expect(scriptsOnly.stdout).toContain('No server has a sandbox');
    expect(scriptsOnly.stdout).toContain('skill scripts: workspace-write, no network');
  }, 60_000);

  it('a server that fails in its sandbox is told what the sandbox refused, not to wait longer', async () => {
    const { p, key } = project();
    p.write('tack.json', {
      mcpServers: {
        // Reads a key the sandbox hides at start-up and dies of it, as a server needing ~/.aws would.
        keyed: {
          command: process.execPath,
          args: ['-e', `require('node:fs').readFileSync(${JSON.stringify(key)})`],
          sandbox: 'read-only',
        },
        // The README's old example: npx without network never fetches its package.
        fetched: {
          command: 'npx',
          args: ['-y', '@modelcontextprotocol/server-filesystem', '.'],
          sandbox: 'workspace-write',
          startupTimeoutMs: 5000,
        },
      },
    });
    const servers = await tack(['servers'], { cwd: p.dir, env: p.env });
    expect(servers.stdout).toMatch(/^keyed\s+stdio\s+failed/m);
    expect(servers.stdout).toContain(
      `hint: The sandbox refused: ${key} is not visible: the home folder is hidden (home: false, profile read-only)`,
    );
    expect(servers.stdout).toMatch(/^fetched\s+stdio\s+failed/m);
    expect(servers.stdout).toContain(
      'hint: npx downloads the package first, and the sandbox has no network (network: false, profile workspace-write): use "sandbox": {"profile": "package-runner"}',
    );
    expect(servers.stdout).not.toContain('raise mcpServers.fetched.startupTimeoutMs');
    expect(servers.stderr).toContain('warning: server "fetched" sandbox: npx downloads packages');
  }, 60_000);
});

/** A policy as the resolver makes it, for plans checked without a configuration file. */
function policyOf(fields: Partial<SandboxPolicy> & { workspace: string; homes: string[]; stateDir: string }) {
  const rule = (path: string) => ({ path, written: path, origin: 'test' });
  return {
    profile: 'read-only',
    origin: 'test',
    network: false,
    networkOrigin: '',
    read: [],
    write: [],
    home: false,
    homeOrigin: 'test',
    required: true,
    hidden: [dirname(fields.stateDir)],
    ...fields,
    rule,
  } satisfies SandboxPolicy & { rule: unknown };
}

describe.runIf(LINUX)('the red team’s findings on issue 27’s sandbox, each held', () => {
  it('hides the account’s own home folder when HOME points elsewhere, or is /', () => {
    const { p } = project();
    p.write('tack.json', { mcpServers: { s: { command: 'sh', args: [], sandbox: 'read-only' } } });
    const account = userInfo().homedir;
    // tack's own HOME pointed elsewhere too (os.homedir() is only $HOME), as under sudo -E or in CI.
    const own = process.env.HOME;
    process.env.HOME = p.env.HOME;
    try {
      for (const HOME of [p.env.HOME!, '/']) {
        p.env.HOME = HOME;
        const policy = (p.load().servers.find((s) => s.name === 's') as StdioServerConfig).sandbox!;
        expect(policy.homes).toContain(account);
      }
    } finally {
      process.env.HOME = own;
    }
  });

  it('never makes / or a system folder writable, whatever the workspace or a rule says', () => {
    const base = mkdtempSync(join(readOnlyRootDir(), 'tack-wide-'));
    scope.defer(() => rmSync(base, { recursive: true, force: true }));
    const home = join(base, 'home');
    mkdirSync(home);
    const policy = policyOf({ workspace: '/', homes: [home], stateDir: join(base, 'state', 's') });
    // A link no sandbox of this configuration could have planted still never leads a writable rule into /usr.
    symlinkSync('/usr/local/bin', join(base, 'bin-link'));
    for (const write of [
      '/',
      join(home, '..', '..', '..', '..', '..', '..'),
      '/usr',
      '/etc',
      join(base, 'bin-link'),
    ]) {
      const plan = planMounts(
        { ...policy, write: [policy.rule(write)] },
        { cwd: base, stateDir: policy.stateDir },
      );
      // Refused either as too wide or, for the link, as planted below the workspace (/ here): never bound.
      expect(plan.refused, write).toHaveLength(1);
      expect(bwrapArgs(plan).join(' ')).not.toMatch(/--bind \/ \//);
    }
  });

  it('keeps every proxy socket in tack’s own hidden state, and counts a visible host /tmp as a way out', async () => {
    const base = mkdtempSync(join(readOnlyRootDir(), 'tack-proxied-'));
    scope.defer(() => rmSync(base, { recursive: true, force: true }));
    const stateDir = join(base, 'state', 'sandbox', 's');
    const policy = policyOf({
      workspace: base,
      homes: [join(base, 'home')],
      stateDir,
      hidden: [join(base, 'state')],
      network: [
        { host: 'example.com', port: 443, subdomains: false, written: 'example.com:443', origin: 'test' },
      ],
    });
    const launch = await prepareLaunch(policy, {
      command: 'sh',
      args: [],
      env: { PATH: '/usr/bin:/bin' },
      cwd: base,
      subject: 'test',
      note: () => {},
    });
    await launch.close();
    const proxy = launch.plan!.mounts.find((m) => m.purpose === 'proxy')!;
    expect(inside(proxy.source!, join(base, 'state'))).toBe(true);
    const open = planMounts(
      {
        ...policyOf({ workspace: base, homes: [join(base, 'home')], stateDir }),
        read: [policy.rule('/tmp')],
      },
      { cwd: base, stateDir },
    );
    const guarantees = guaranteesOf(open, bwrapArgs(open));
    expect(guarantees.noNetwork).toBe(false);
    expect(guarantees.network).toContain("the host's /tmp is reachable");
    // A folder below /tmp (an ssh-agent's) counts too; the workspace under /tmp does not.
    const agent = mkdtempSync(join(tmpdir(), 'tack-agent-'));
    scope.defer(() => rmSync(agent, { recursive: true, force: true }));
    const below = planMounts(
      { ...policyOf({ workspace: base, homes: [join(base, 'home')], stateDir }), read: [policy.rule(agent)] },
      { cwd: base, stateDir },
    );
    expect(guaranteesOf(below, bwrapArgs(below)).network).toContain(`the host's ${agent} is reachable`);
    const project = mkdtempSync(join(tmpdir(), 'tack-tmp-project-'));
    scope.defer(() => rmSync(project, { recursive: true, force: true }));
    const inTmp = policyOf({ workspace: project, homes: [join(base, 'home')], stateDir });
    const plain = planMounts({ ...inTmp, write: [inTmp.rule(project)] }, { cwd: project, stateDir });
    expect(guaranteesOf(plain, bwrapArgs(plain)).noNetwork).toBe(true);
  });

  it('starts with a HOME that is a link (/home -> /var/home), and a program reached through a link binds its name', async () => {
    const base = mkdtempSync(join(readOnlyRootDir(), 'tack-linked-home-'));
    scope.defer(() => rmSync(base, { recursive: true, force: true }));
    const real = join(base, 'var-home');
    const home = join(base, 'home');
    mkdirSync(join(real, 'tools', 'pkg', 'bin'), { recursive: true });
    symlinkSync(real, home);
    writeFileSync(join(real, 'tools', 'pkg', 'package.json'), '{}');
    writeFileSync(
      join(real, 'tools', 'pkg', 'bin', 'x.js'),
      "process.stdout.write('ran from the package');\n",
    );
    mkdirSync(join(real, '.local', 'bin'), { recursive: true });
    symlinkSync('../../tools/pkg/bin/x.js', join(real, '.local', 'bin', 'x'));
    const workspace = join(base, 'project');
    mkdirSync(workspace);
    const stateDir = join(home, '.local', 'state', 'tack', 'sandbox', 's');
    const policy = policyOf({
      workspace,
      homes: [home],
      stateDir,
      hidden: [join(home, '.local', 'state', 'tack')],
      read: [{ path: workspace, written: '${workspace}', origin: 'test' }],
    });
    const launch = await prepareLaunch(policy, {
      command: 'node',
      args: [join(home, '.local', 'bin', 'x')],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      cwd: workspace,
      subject: 'test',
      note: () => {},
    });
    const stdout = await new Promise<string>((resolve) => {
      const child = spawn(launch.command, launch.args, { env: launch.env, cwd: launch.cwd });
      let out = '';
      child.stdout.on('data', (chunk) => {
        out += chunk;
      });
      child.stderr.resume();
      child.once('close', () => resolve(out));
    });
    await launch.close();
    expect(stdout).toBe('ran from the package');
    if (launch.status.state !== 'enforced') throw new Error('not enforced');
    expect(launch.status.guarantees.files).toContain(`${join(real, 'tools', 'pkg')} is readable`);
    // The same link as the command itself (an npm bin link: a script with #!), its package bound with it.
    writeFileSync(join(real, 'tools', 'pkg', 'lib.js'), "module.exports = 'and its package';\n");
    writeFileSync(
      join(real, 'tools', 'pkg', 'bin', 'x.js'),
      "#!/usr/bin/env node\nprocess.stdout.write(`ran ${require('../lib.js')}`);\n",
    );
    chmodSync(join(real, 'tools', 'pkg', 'bin', 'x.js'), 0o755);
    const direct = await prepareLaunch(policy, {
      command: join(home, '.local', 'bin', 'x'),
      args: [],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
      cwd: workspace,
      subject: 'test',
      note: () => {},
    });
    const ran = await run(direct);
    await direct.close();
    expect(ran).toMatchObject({ code: 0, stderr: '' });
  });

  it('refuses a link into the home folder when the workspace holds the home folder', () => {
    const base = mkdtempSync(join(readOnlyRootDir(), 'tack-holds-home-'));
    const outside = mkdtempSync(join(readOnlyRootDir(), 'tack-outside-'));
    scope.defer(() => rmSync(base, { recursive: true, force: true }));
    scope.defer(() => rmSync(outside, { recursive: true, force: true }));
    const home = join(base, 'home');
    mkdirSync(join(home, '.ssh'), { recursive: true });
    symlinkSync(join(home, '.ssh'), join(outside, 'keys'));
    const policy = policyOf({ workspace: base, homes: [home], stateDir: join(base, 'state', 's') });
    const plan = planMounts(
      { ...policy, read: [policy.rule(base), policy.rule(join(outside, 'keys'))] },
      { cwd: base, stateDir: policy.stateDir },
    );
    expect(plan.refused.map((r) => r.why)).toEqual([expect.stringContaining('which the sandbox hides')]);
  });

  it('catches a parent folder swapped for a link after planning: the mount table names what was mounted', async () => {
    const { p } = project();
    const victim = mkdtempSync(join(readOnlyRootDir(), 'tack-victim-'));
    scope.defer(() => rmSync(victim, { recursive: true, force: true }));
    mkdirSync(join(p.dir, 'a', 'b'), { recursive: true });
    mkdirSync(join(victim, 'b'));
    p.write('tack.json', {
      mcpServers: { s: { command: 'sh', args: [], sandbox: { write: ['${workspace}/a/b'] } } },
    });
    const policy = (p.load().servers.find((s) => s.name === 's') as StdioServerConfig).sandbox!;
    const launch = await prepareLaunch(policy, {
      command: 'sh',
      args: ['-c', `echo ran > ${join(p.dir, 'a', 'b', 'ran')}`],
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
      cwd: p.dir,
      subject: 'test',
      note: () => {},
    });
    renameSync(join(p.dir, 'a'), join(p.dir, 'a.old'));
    symlinkSync(relative(p.dir, victim), join(p.dir, 'a'));
    const result = await run(launch);
    await launch.close();
    expect(result.stderr).toContain(IDENTITY_MISMATCH);
    expect(result.code).toBe(125);
    expect(existsSync(join(victim, 'b', 'ran'))).toBe(false);
  });

  it('starts a server through node_modules/.bin in a folder of the home, whose node_modules is bound with the link in it', async () => {
    const { p, home } = project();
    const pkg = join(home, 'mcp', 'node_modules', 'srv');
    mkdirSync(join(pkg, 'dist'), { recursive: true });
    writeFileSync(join(pkg, 'package.json'), '{}');
    writeFileSync(join(pkg, 'dist', 'index.js'), "#!/usr/bin/env node\nprocess.stdout.write('started');\n");
    chmodSync(join(pkg, 'dist', 'index.js'), 0o755);
    mkdirSync(join(home, 'mcp', 'node_modules', '.bin'));
    const bin = join(home, 'mcp', 'node_modules', '.bin', 'srv');
    symlinkSync('../srv/dist/index.js', bin);
    p.write('tack.json', { mcpServers: { s: { command: 'sh', args: [], sandbox: 'read-only' } } });
    const policy = (p.load().servers.find((s) => s.name === 's') as StdioServerConfig).sandbox!;
    for (const line of [
      { command: bin, args: [] },
      { command: 'node', args: [bin] },
    ]) {
      const launch = await prepareLaunch(policy, {
        ...line,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: home },
        cwd: p.dir,
        subject: 'test',
        note: () => {},
      });
      const result = await run(launch);
      await launch.close();
      expect(result, JSON.stringify(line)).toMatchObject({ code: 0, stderr: '' });
    }
  });
});
