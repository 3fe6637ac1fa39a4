import { mkdirSync, symlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tack } from '../helpers/cli.js';
import { fixture } from '../helpers/project.js';
import { fakeHome, LINUX, RUNS_AS_ROOT } from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

const entry = (sandbox?: unknown) => ({
  command: process.execPath,
  args: [fixture('sandbox-server.js')],
  ...(sandbox === undefined ? {} : { sandbox }),
});

function project(mcpServers: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  const p = scope.project('tack-sandbox-cli-');
  const { home } = fakeHome(scope);
  p.env.HOME = home;
  p.write('tack.json', { mcpServers, ...extra });
  return p;
}

describe.runIf(LINUX)('tack and the sandbox, from the command line', () => {
  it('tack servers and tack tools --security show each sandbox and where a label came from', async () => {
    const p = project({
      boxed: entry('workspace-write'),
      listed: entry({ network: ['api.example.com:443'] }),
      plain: entry(),
    });
    const servers = await tack(['servers'], { cwd: p.dir, env: p.env });
    expect(servers.code).toBe(0);
    const row = (name: string) =>
      servers.stdout.split('\n').find((line) => line.startsWith(`${name} `)) ?? '';
    expect(row('boxed')).toMatch(/connected .* workspace-write, no network$/);
    expect(row('listed')).toMatch(/connected .* read-only, 1 host via proxy$/);
    expect(row('plain')).toMatch(/connected .* none$/);
    const json = JSON.parse((await tack(['servers', '--json'], { cwd: p.dir, env: p.env })).stdout);
    expect(json.find((s: { name: string }) => s.name === 'boxed').sandbox).toMatchObject({
      state: 'enforced',
      profile: 'workspace-write',
      origin: 'mcpServers.boxed.sandbox (tack.json)',
      guarantees: { noNetwork: true, noPrivateFiles: !RUNS_AS_ROOT },
    });

    const security = await tack(['tools', '--security'], { cwd: p.dir, env: p.env });
    expect(security.code).toBe(0);
    const tool = (name: string) =>
      security.stdout.split('\n').find((line) => line.startsWith(`${name} `)) ?? '';
    // http_get says http: an egress guess, ruled out where there is no network, kept behind a proxy.
    expect(tool('mcp__boxed__http_get')).toContain(
      'no egress (sandbox: no network (network: false, profile workspace-write) (instead of default: name: http))',
    );
    expect(tool('mcp__listed__http_get')).toContain('; egress (default: name: http)');
    expect(tool('mcp__plain__http_get')).toContain('; egress (default: name: http)');
    expect(security.stdout).toMatch(/^boxed\s+workspace-write, no network\s+no network \(network: false/m);
    expect(security.stdout).toMatch(/^plain\s+none\s+-$/m);
  });

  it('tack sandbox check probes each policy and agrees with it', async () => {
    const p = project(
      {
        boxed: entry('workspace-write'),
        listed: entry({ network: ['api.example.com:443', '*.example.org:443'] }),
      },
      { sandbox: { skillScripts: 'read-only' } },
    );
    const run = await tack(['sandbox', 'check'], { cwd: p.dir, env: p.env });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('server "boxed": workspace-write, no network, enforced by bubblewrap');
    expect(run.stdout).toContain('server "listed": read-only, 2 hosts via proxy');
    expect(run.stdout).toContain('skill scripts: read-only, no network, enforced by bubblewrap');
    expect(run.stdout).not.toContain('MISMATCH');
    expect(run.stdout).toMatch(new RegExp(`write\\s+${p.dir} \\(workspace\\)\\s+writable\\s+writable`));
    expect(run.stdout).toMatch(/proxy\s+api\.example\.com:443 \(allow-listed\)\s+allowed\s+allowed/);
    expect(run.stdout).toMatch(/proxy\s+tack-check\.example\.org:443 \(allow-listed\)\s+allowed\s+allowed/);
    expect(run.stdout).toMatch(
      /proxy\s+not-listed\.tack-check\.invalid:443 \(not listed\)\s+refused\s+refused/,
    );
    const json = JSON.parse(
      (await tack(['sandbox', 'check', 'boxed', '--json'], { cwd: p.dir, env: p.env })).stdout,
    );
    expect(json.checked).toHaveLength(1);
    const rows = json.checked[0].report.rows as Array<{
      check: string;
      label: string;
      expected: string;
      observed: string;
    }>;
    expect(rows.find((r) => r.label === 'SSH keys')).toMatchObject({
      expected: 'hidden',
      observed: 'hidden',
    });
    expect(rows.find((r) => r.check === 'network')).toMatchObject({
      expected: 'refused',
      observed: 'refused',
    });
  });

  it('a program reached through a link in /tmp (a clone with its dist/ linked in) starts, and the check agrees', async () => {
    const p = project({});
    // The project lies in the host's /tmp, which the sandbox replaces with its own: the link dist -> the
    // repository's dist/ must be made inside too, or node is handed a path it cannot open.
    symlinkSync(dirname(dirname(dirname(fixture('sandbox-server.js')))), join(p.dir, 'dist'));
    // The project is a folder beside the link: the link lies outside the workspace, in the sandbox's own /tmp.
    mkdirSync(join(p.dir, 'project'));
    p.write('project/tack.json', {
      mcpServers: {
        fs: {
          command: process.execPath,
          args: ['../dist/fixtures/servers/sandbox-server.js'],
          sandbox: { profile: 'read-only', write: ['${workspace}'] },
        },
      },
    });
    const env = { ...p.env, TACK_TRUST_PROJECT: '1' };
    const cwd = join(p.dir, 'project');
    const servers = await tack(['servers'], { cwd, env });
    expect(servers.stdout).toMatch(/^fs\s+stdio\s+connected/m);
    expect(servers.code).toBe(0);
    const check = await tack(['sandbox', 'check', 'fs'], { cwd, env });
    expect(check.stdout).toMatch(/sandbox-server\.js \(on the command line\)\s+visible\s+visible/);
    expect(check.stdout).not.toContain('MISMATCH');
  });

  it('without bubblewrap: a required sandbox stops its server with the reason, a preferred one starts with a warning', async () => {
    const p = project({
      strict: entry('read-only'),
      lenient: entry({ profile: 'read-only', required: false }),
    });
    const env = { ...p.env, TACK_BWRAP: '/nonexistent/bwrap' };
    const servers = await tack(['servers'], { cwd: p.dir, env });
    expect(servers.stdout).toMatch(/^strict\s+stdio\s+failed/m);
    expect(servers.stdout).toMatch(/^lenient\s+stdio\s+connected .* read-only: NOT ENFORCED$/m);
    expect(servers.stdout).toContain(
      'strict: server "strict" requires a sandbox (mcpServers.strict.sandbox (tack.json)), and bubblewrap is not installed (no /nonexistent/bwrap)',
    );
    expect(servers.stdout).toContain('hint: Install it (Debian, Ubuntu: apt-get install bubblewrap');
    expect(servers.stderr).toContain(
      'warning: server "lenient" runs without its sandbox (mcpServers.lenient.sandbox (tack.json)): bubblewrap is not installed',
    );
    const check = await tack(['sandbox', 'check', 'strict'], { cwd: p.dir, env });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(
      'server "strict": cannot check (mcpServers.strict.sandbox (tack.json)): server "strict" requires a sandbox',
    );
  });
});
