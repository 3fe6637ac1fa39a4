import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CallToolResult } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { McpHost } from '../../src/mcp/host.js';
import { fixture, REPO, startHost } from '../helpers/project.js';
import {
  countingServer,
  eventually,
  FAKE_KEY,
  fakeHome,
  LINUX,
  pidsWith,
  RUNS_AS_ROOT,
  readOnlyRootDir,
} from '../helpers/sandbox.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

const text = (result: CallToolResult) =>
  result.content.map((block) => (block.type === 'text' ? block.text : '')).join('');

/** The fixture server with a marker argument, so the test can find its processes. */
const sandboxServer = (sandbox: unknown, home: string, marker = randomUUID()) => ({
  command: process.execPath,
  args: [fixture('sandbox-server.js'), marker],
  env: { HOME: home },
  ...(sandbox === undefined ? {} : { sandbox }),
});

async function world(servers: (home: string) => Record<string, unknown>) {
  const p = scope.project('tack-sandbox-');
  const { home, key } = fakeHome(scope);
  // The policy hides the home folder tack's configuration names: the test's own.
  p.env.HOME = home;
  const host = await startHost(p, servers(home));
  scope.defer(() => host.close());
  return { p, home, key, host };
}

const log = (host: McpHost, server: string) => {
  const file = host.servers().find((s) => s.name === server)?.logFile;
  return file ? readFileSync(file, 'utf8') : '';
};

describe.runIf(LINUX)('sandboxed stdio servers (bubblewrap, real namespaces)', () => {
  it('hides the home folder, writes only where the policy says, has no network, and keeps answering', async () => {
    const target = await countingServer(scope, 'hello');
    const outside = mkdtempSync(join(tmpdir(), 'tack-outside-'));
    scope.defer(() => rmSync(outside, { recursive: true, force: true }));
    const { p, key, host } = await world((home) => ({
      boxed: sandboxServer('workspace-write', home),
      plain: sandboxServer(undefined, home),
    }));
    const call = (server: string, tool: string, args: Record<string, unknown> = {}) =>
      host.callTool(`mcp__${server}__${tool}`, args) as Promise<CallToolResult>;

    // The control: without a sandbox the same server reads the key. The test can fail.
    expect(text(await call('plain', 'read_file', { path: key }))).toBe(FAKE_KEY);
    const stolen = await call('boxed', 'read_file', { path: key });
    expect(stolen.isError).toBe(true);
    expect(text(stolen)).toMatch(/ENOENT/);

    // Inside the workspace: written, on the host.
    const inside = join(p.dir, 'notes.txt');
    expect((await call('boxed', 'write_file', { path: inside, text: 'kept' })).isError).toBeFalsy();
    expect(readFileSync(inside, 'utf8')).toBe('kept');
    // Outside: another folder (the host's /tmp is not the sandbox's) and the repository (read-only root).
    const away = await call('boxed', 'write_file', { path: join(outside, 'x.txt'), text: 'lost' });
    expect(away.isError).toBe(true);
    expect(existsSync(join(outside, 'x.txt'))).toBe(false);
    const repo = join(readOnlyRootDir(), `sandbox-escape-${process.pid}.txt`);
    const readOnly = await call('boxed', 'write_file', { path: repo, text: 'lost' });
    expect(text(readOnly)).toMatch(/EROFS/);
    expect(existsSync(repo)).toBe(false);
    // tack's own state (the store with OAuth tokens) is hidden even though it lies inside this workspace.
    const store = join(p.home, 'state', 'tack.db');
    expect(existsSync(store)).toBe(true);
    expect((await call('boxed', 'read_file', { path: store })).isError).toBe(true);

    // No network: the HTTP server on the host's loopback is out of reach, and received nothing.
    const direct = await call('boxed', 'http_get', {
      url: `http://127.0.0.1:${target.port}/`,
      via: 'direct',
    });
    expect(text(direct)).toMatch(/ECONNREFUSED/);
    expect(target.requests).toEqual([]);
    expect(
      text(await call('plain', 'http_get', { url: `http://127.0.0.1:${target.port}/`, via: 'direct' })),
    ).toBe('200 hello');

    // Still answering MCP after every refusal, from inside the sandbox it was given.
    const env = JSON.parse(text(await call('boxed', 'environment')));
    expect(env).toMatchObject({ TACK_SANDBOX: 'workspace-write', TMPDIR: '/tmp' });
    expect(env.pid).toBeLessThan(10); // its own PID namespace
    expect(host.servers().find((s) => s.name === 'boxed')?.sandbox).toMatchObject({
      state: 'enforced',
      network: 'off',
      guarantees: { noNetwork: true, noPrivateFiles: !RUNS_AS_ROOT },
    });

    // The server's log names the rule behind each refusal.
    const lines = log(host, 'boxed');
    expect(lines).toContain(
      `sandbox: ${key} is not visible: the home folder is hidden (home: false, profile workspace-write)`,
    );
    expect(lines).toMatch(
      new RegExp(`sandbox: writing ${repo} was refused: it is outside every writable path`),
    );
    expect(lines).toContain('the sandbox has no network (network: false, profile workspace-write)');
  });

  it('reaches allow-listed hosts through the proxy, and nothing else', async () => {
    const allowed = await countingServer(scope, 'allowed');
    const other = await countingServer(scope, 'other');
    const { host } = await world((home) => ({
      listed: sandboxServer(
        { profile: 'workspace-write', network: [`127.0.0.1:${allowed.port}`, `localhost:${allowed.port}`] },
        home,
      ),
      open: sandboxServer({ profile: 'workspace-write', network: true }, home),
    }));
    const get = async (server: string, url: string, via: string) =>
      text((await host.callTool(`mcp__${server}__http_get`, { url, via })) as CallToolResult);

    expect(await get('listed', `http://127.0.0.1:${allowed.port}/plain`, 'proxy')).toBe('200 allowed');
    expect(await get('listed', `http://localhost:${allowed.port}/tunnel`, 'tunnel')).toBe('200 allowed');
    // Not on the list: refused by the proxy (plain and CONNECT), and the host never saw a request.
    expect(await get('listed', `http://127.0.0.1:${other.port}/`, 'proxy')).toMatch(
      new RegExp(`^403 tack sandbox proxy: 127.0.0.1:${other.port} is not in the allow-list`),
    );
    expect(await get('listed', `http://localhost:${other.port}/`, 'tunnel')).toMatch(
      /refused the tunnel: 403/,
    );
    // Around the proxy there is no route at all, even to the allowed host.
    expect(await get('listed', `http://127.0.0.1:${allowed.port}/direct`, 'direct')).toMatch(/ECONNREFUSED/);
    expect(allowed.requests).toEqual(['GET /plain', 'GET /tunnel']);
    expect(other.requests).toEqual([]);
    // network: true shares the host's network.
    expect(await get('open', `http://127.0.0.1:${other.port}/open`, 'direct')).toBe('200 other');

    // Every decision is in the log, with the rule.
    const lines = log(host, 'listed');
    expect(lines).toContain(
      `sandbox proxy: allowed GET 127.0.0.1:${allowed.port}: allowed by 127.0.0.1:${allowed.port} (mcpServers.listed.sandbox.network[0] (tack.json))`,
    );
    expect(lines).toContain(
      `sandbox proxy: allowed CONNECT localhost:${allowed.port}: allowed by localhost:${allowed.port} (mcpServers.listed.sandbox.network[1] (tack.json))`,
    );
    expect(lines).toContain(`sandbox proxy: REFUSED GET 127.0.0.1:${other.port}`);
    expect(lines).toContain(`sandbox proxy: REFUSED CONNECT localhost:${other.port}`);
  });

  it('restarts a sandboxed server that crashed or was killed', async () => {
    const marker = randomUUID();
    const { host } = await world((home) => ({ boxed: sandboxServer('read-only', home, marker) }));
    const pid = async () =>
      JSON.parse(text((await host.callTool('mcp__boxed__environment', {})) as CallToolResult)).pid;
    await host.callTool('mcp__boxed__crash', {});
    await eventually(() => host.servers()[0]!.status === 'failed');
    // The next call restarts it (after the test backoff), still sandboxed.
    expect(await pid()).toBeLessThan(10);
    expect(host.servers()[0]).toMatchObject({
      status: 'connected',
      restarts: 1,
      sandbox: { state: 'enforced' },
    });

    // Killed from outside: every process of the sandbox (bubblewrap and the server) goes, and it comes back.
    const before = pidsWith(marker);
    expect(before.length).toBeGreaterThanOrEqual(2);
    for (const p of before) process.kill(p, 'SIGKILL');
    await eventually(() => host.servers()[0]!.status === 'failed');
    expect(await pid()).toBeLessThan(10);
    expect(host.servers()[0]!.restarts).toBe(2);
  });

  it('takes the sandboxed server down with tack when tack is killed', async () => {
    const p = scope.project('tack-sandbox-die-');
    const marker = randomUUID();
    p.write('tack.json', { mcpServers: { boxed: sandboxServer('read-only', tmpdir(), marker) } });
    const script = p.write(
      'host.mjs',
      `import { loadConfig, McpHost } from ${JSON.stringify(join(REPO, 'dist/src/index.js'))};
const host = await McpHost.start({ config: loadConfig() });
process.stdout.write(host.servers()[0].status + '\\n');
setInterval(() => {}, 1 << 30);`,
    );
    const { spawn } = await import('node:child_process');
    const child = spawn(process.execPath, [script], {
      cwd: p.dir,
      env: p.env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    scope.defer(() => void child.kill('SIGKILL'));
    const status = await new Promise<string>((resolve) =>
      child.stdout.once('data', (d: Buffer) => resolve(String(d))),
    );
    expect(status.trim()).toBe('connected');
    expect(pidsWith(marker).length).toBeGreaterThanOrEqual(2);
    child.kill('SIGKILL'); // no cleanup of tack's runs: only --die-with-parent can take the sandbox down
    expect(await eventually(() => pidsWith(marker).length === 0)).toBe(true);
  });
});
