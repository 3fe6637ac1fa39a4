import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TackStore } from '../../src/store/store.js';
import { BIN, tack } from '../helpers/cli.js';
import { alive, readPids } from '../helpers/processes.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';

function project() {
  const p = tempProject();
  p.write('tack.json', {
    mcpServers: {
      modern: fixtureEntry('stdio-server.js'),
      legacy: fixtureEntry('legacy-stdio-server.js'),
    },
  });
  return p;
}

describe('tack CLI', () => {
  it('servers --json shows a modern and a legacy server with their eras', async () => {
    using p = project();
    const run = await tack(['servers', '--json'], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(0);
    const servers = JSON.parse(run.stdout) as Array<Record<string, unknown>>;
    expect(servers.map((s) => [s.name, s.status, s.era, s.protocolVersion])).toEqual([
      ['modern', 'connected', 'modern', '2026-07-28'],
      ['legacy', 'connected', 'legacy', '2025-11-25'],
    ]);
  });

  it('servers prints a table, and a failing server with its reason, hint and log; exit 1 (a health check)', async () => {
    using p = project();
    const file = p.write('broken.json', {
      mcpServers: {
        ok: fixtureEntry('stdio-server.js'),
        broken: fixtureEntry('stdio-server.js', ['--exit-at-start']),
      },
    });
    const run = await tack(['servers', '--config', file], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(1);
    const [header, ...rows] = run.stdout.split('\n');
    expect(header).toMatch(/^NAME\s+TRANSPORT\s+STATE\s+ERA\s+PROTOCOL\s+SERVER\s+TOOLS/);
    expect(rows[0]).toMatch(/^ok\s+stdio\s+connected\s+modern\s+2026-07-28\s+tack-fixture 1\.2\.3\s+13\s/);
    expect(rows[1]).toMatch(/^broken\s+stdio\s+failed\s+-/);
    expect(run.stdout).toContain('broken: server "broken" failed to start: exited with code 2');
    expect(run.stdout).toContain('fixture: missing configuration, exiting');
    expect(run.stdout).toMatch(/log: .*broken\.log/);
  });

  it("hints at an HTTP server's URL, not at running a command by hand (issue 29)", async () => {
    using p = project();
    const server = createServer((_req, res) => res.writeHead(404).end());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/not-mcp`;
    try {
      const file = p.write('web.json', { mcpServers: { web: { type: 'http', url } } });
      const run = await tack(['servers', '--config', file], { cwd: p.dir, env: p.env });
      expect(run.code).toBe(1);
      expect(run.stdout).toContain(
        `hint: Check that the server is up and that mcpServers.web.url (${url}) is its MCP endpoint; its log:`,
      );
      expect(run.stdout).not.toContain('by hand');
    } finally {
      server.close();
    }
  });

  it('tools --json prices every definition with the tokenizer; global options go anywhere', async () => {
    using p = project();
    const run = await tack(['--json', 'tools', '--server', 'legacy'], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(0);
    const out = JSON.parse(run.stdout) as {
      tools: Array<{ name: string; server: string; tokens: number }>;
      totals: {
        servers: Record<string, { tools: number; tokens: number }>;
        overall: { tools: number; tokens: number };
      };
    };
    expect(out.tools.every((t) => t.server === 'legacy' && t.name.startsWith('mcp__legacy__'))).toBe(true);
    expect(out.tools.find((t) => t.name === 'mcp__legacy__echo')?.tokens).toBeGreaterThan(20);
    expect(out.totals.overall.tokens).toBe(out.tools.reduce((sum, t) => sum + t.tokens, 0));
    expect(Object.keys(out.totals.servers)).toEqual(['legacy']);
  });

  it('tools prints a table with totals per server', async () => {
    using p = project();
    const run = await tack(['tools'], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/^TOOL\s+TITLE\s+DESCRIPTION\s+TOKENS$/m);
    expect(run.stdout).toMatch(/^mcp__modern__echo\s+Echo\s+Echo the given text back\. .*\s\d+$/m);
    expect(run.stdout).toMatch(/^modern\s+13\s+\d+$/m);
    expect(run.stdout).toMatch(/^total\s+26\s+\d+$/m);
  });

  it('call prints content and structuredContent; a tool error exits 1, bad JSON exits 2', async () => {
    using p = project();
    const ok = await tack(['call', 'mcp__modern__add', '{"a": 1, "b": 2}'], { cwd: p.dir, env: p.env });
    expect(ok).toMatchObject({ code: 0 });
    expect(ok.stdout).toBe('3\nstructuredContent:\n{\n  "sum": 3\n}\n');

    const toolError = await tack(['call', 'mcp__legacy__fail'], { cwd: p.dir, env: p.env });
    expect(toolError.code).toBe(1);
    expect(toolError.stdout).toBe('the tool failed on purpose\n');
    expect(toolError.stderr).toContain('The tool reported an error (isError)');

    const badJson = await tack(['call', 'mcp__modern__echo', '{text: hi}'], { cwd: p.dir, env: p.env });
    expect(badJson.code).toBe(2);
    expect(badJson.stderr).toMatch(/^error: the tool arguments must be a JSON object: /);
    expect(badJson.stderr).toMatch(/^hint: Quote it for the shell/m);

    const unknown = await tack(['call', 'mcp__modern__ecko', '{}'], { cwd: p.dir, env: p.env });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('error: no tool named "mcp__modern__ecko"');
    expect(unknown.stderr).toContain('hint: Did you mean "mcp__modern__echo"');
  });

  it('read and prompt print what the server returned', async () => {
    using p = project();
    const read = await tack(['read', 'memo://notes/42', '--server', 'legacy'], { cwd: p.dir, env: p.env });
    expect(read).toMatchObject({ code: 0, stdout: '# Note 42\n' });
    const prompt = await tack(['prompt', 'modern', 'greet', '{"name":"Ada"}'], { cwd: p.dir, env: p.env });
    expect(prompt).toMatchObject({ code: 0, stdout: 'user: Say hello to Ada.\n' });
    const json = await tack(['prompt', 'modern', 'greet', '{"name":"Ada"}', '--json'], {
      cwd: p.dir,
      env: p.env,
    });
    expect(JSON.parse(json.stdout).messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Say hello to Ada.' } },
    ]);
  });

  it('resources and prompts list what read and prompt take', async () => {
    using p = project();
    const resources = await tack(['resources', '--server', 'modern'], { cwd: p.dir, env: p.env });
    expect(resources.code).toBe(0);
    expect(resources.stdout).toMatch(
      /^modern\s+resource\s+memo:\/\/readme\s+text\/plain\s+A static text resource\.$/m,
    );
    expect(resources.stdout).toMatch(
      /^modern\s+template\s+memo:\/\/notes\/\{id\}\s+text\/markdown\s+A note by id\.$/m,
    );
    const prompts = await tack(['prompts', '--json'], { cwd: p.dir, env: p.env });
    expect(JSON.parse(prompts.stdout)).toEqual([
      {
        server: 'modern',
        name: 'greet',
        arguments: [{ name: 'name', required: true }],
        description: 'Greet someone by name.',
      },
      {
        server: 'legacy',
        name: 'greet',
        arguments: [{ name: 'name', required: true }],
        description: 'Greet someone by name.',
      },
    ]);
  });

  it('cancels the call in flight on Ctrl-C and exits 130', async () => {
    using p = project();
    const child = spawn(
      process.execPath,
      [BIN, 'call', 'mcp__modern__slow', '{"steps": 100, "delayMs": 100}'],
      {
        cwd: p.dir,
        env: p.env,
      },
    );
    let stderr = '';
    let interrupted = false;
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (!interrupted && stderr.includes('progress: 2/100')) {
        interrupted = true;
        child.kill('SIGINT');
      }
    });
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain('error: tools/call "slow" on server "modern" was cancelled');
    expect(stderr).not.toContain('progress: 50/100');
  });

  it('stops waiting for servers on Ctrl-C, kills them, and exits 130', async () => {
    using p = project();
    const pids = join(p.dir, 'pids');
    const file = p.write('hang.json', {
      mcpServers: { hang: fixtureEntry('stdio-server.js', ['--hang-at-start', '--pid-file', pids]) },
    });
    const child = spawn(process.execPath, [BIN, 'servers', '--config', file], { cwd: p.dir, env: p.env });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    // Wait until the server process exists, then interrupt.
    await expect.poll(() => existsSync(pids), { timeout: 10_000 }).toBe(true);
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(code).toBe(130);
    expect(stderr).toContain('error: interrupted');
    const spawned = readPids(pids);
    await expect.poll(() => spawned.filter(alive), { timeout: 5000 }).toEqual([]);
  });

  it('audit lists what the gateway recorded, newest first', async () => {
    using p = tempProject();
    const store = TackStore.open(join(p.home, 'state', 'tack.db'));
    for (const [tool, outcome] of [
      ['echo', 'ok'],
      ['crash', 'failed'],
    ] as const) {
      store.audit.record({
        at: '2026-11-29T12:00:00.000Z',
        client: 'claude@1 (stdio, legacy)',
        server: 'fx',
        tool,
        argsSha256: 'a'.repeat(64),
        durationMs: 12,
        outcome,
        detail: outcome === 'failed' ? 'server "fx" exited with code 3' : undefined,
      });
    }
    store.close();
    const run = await tack(['audit', '--json', '--limit', '1'], { cwd: p.dir, env: p.env });
    expect(JSON.parse(run.stdout)).toEqual([expect.objectContaining({ tool: 'crash', outcome: 'failed' })]);
    const table = await tack(['audit'], { cwd: p.dir, env: p.env });
    expect(table.stdout).toMatch(/^TIME\s+CLIENT\s+SERVER\s+TOOL\s+OUTCOME\s+MS\s+ARGS SHA-256$/m);
    expect(table.stdout).toMatch(/fx\s+crash\s+failed: server "fx" exited with code 3\s+12\s+aaaaaaaaaaaa/);
  });

  it('stops on a configuration error with one line, a hint and exit code 2, starting nothing', async () => {
    using p = tempProject();
    p.write('tack.json', { mcpServers: { docs: { type: 'http', url: 'localhost:3000' } } });
    const run = await tack(['servers'], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'error: tack.json: mcpServers.docs.url: expected a URL, got "localhost:3000"\n' +
        'hint: Fix the configuration and run again; no server was started.\n',
    );
  });

  it('rejects an unknown command with usage and exit code 2', async () => {
    using p = tempProject();
    const run = await tack(['frobnicate'], { cwd: p.dir, env: p.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/unknown command 'frobnicate'/);
  });

  it('tools search and tools examples are subcommands: a wrong word or a missing argument is a usage error (exit 2)', async () => {
    using p = tempProject();
    const at = { cwd: p.dir, env: p.env };
    const unknown = await tack(['tools', 'frobnicate'], at);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain(
      "unknown command 'frobnicate' for 'tack tools' (expected search or examples)",
    );
    const verb = await tack(['tools', 'examples', 'frobnicate'], at);
    expect(verb.code).toBe(2);
    expect(verb.stderr).toMatch(/unknown command 'frobnicate'[\s\S]*export \[file\][\s\S]*import <file>/);
    const noQuery = await tack(['tools', 'search'], at);
    expect(noQuery.code).toBe(2);
    expect(noQuery.stderr).toContain("missing required argument 'query'");
    const empty = await tack(['tools', 'search', 'weather', ' '], at);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toContain('tack tools search "<query>"');
    const help = await tack(['tools', 'search', '--help'], at);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/-k <n>[\s\S]*--explain/);
  });
});
