import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import type { HostEvent, McpHost } from '../../src/mcp/host.js';
import { startHttpFixture } from '../fixtures/servers/http-server.js';
import { alive, readPids } from '../helpers/processes.js';
import { fixtureEntry, startHost, type TempProject, tempProject } from '../helpers/project.js';

// The host must survive everything below: nothing may escape to the event loop.
const escaped: unknown[] = [];
const onEscape = (error: unknown) => escaped.push(error);
process.on('unhandledRejection', onEscape);
process.on('uncaughtException', onEscape);
afterAll(() => {
  process.off('unhandledRejection', onEscape);
  process.off('uncaughtException', onEscape);
  expect(escaped).toEqual([]);
});

async function failure(promise: Promise<unknown>): Promise<TackError> {
  try {
    await promise;
  } catch (error) {
    if (TackError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the call to fail');
}

function nextEvent(host: McpHost, match: (event: HostEvent) => boolean): Promise<HostEvent> {
  return new Promise((resolve) => {
    const off = host.on((event) => {
      if (match(event)) {
        off();
        resolve(event);
      }
    });
  });
}

describe('faulty servers', () => {
  let project: TempProject;
  let host: McpHost | undefined;
  afterEach(async () => {
    await host?.close();
    host = undefined;
    project?.[Symbol.dispose]();
  });

  it('reports a server that exits at start (which, why, its stderr) and starts the others', async () => {
    project = tempProject();
    host = await startHost(project, {
      broken: fixtureEntry('stdio-server.js', ['--exit-at-start']),
      good: fixtureEntry('stdio-server.js'),
    });
    const [broken, good] = host.servers();
    expect(good?.status).toBe('connected');
    expect(broken).toMatchObject({ status: 'failed', error: { code: 'SERVER_START_FAILED' } });
    expect(broken?.error?.message).toMatch(/^server "broken" failed to start: exited with code 2/);
    expect(broken?.error?.details).toContain('fixture: missing configuration, exiting');
    expect(readFileSync(broken!.logFile!, 'utf8')).toContain('fixture: missing configuration, exiting');

    const call = await failure(host.callTool('mcp__broken__echo', { text: 'x' }));
    expect(call.code).toBe('SERVER_UNAVAILABLE');
    expect(call.message).toMatch(/belongs to server "broken", which is failed: .*exited with code 2/);
    expect((await host.callTool('mcp__good__echo', { text: 'still here' })).content).toEqual([
      { type: 'text', text: 'still here' },
    ]);
  });

  it('times out a server that hangs at start, kills it, and does not wait for it elsewhere', async () => {
    project = tempProject();
    const pids = join(project.dir, 'pids');
    host = await startHost(project, {
      hang: fixtureEntry('stdio-server.js', ['--hang-at-start', '--pid-file', pids], {
        startupTimeoutMs: 5000,
      }),
      good: fixtureEntry('stdio-server.js'),
    });
    const hang = host.servers()[0]!;
    expect(hang).toMatchObject({ status: 'failed', error: { code: 'SERVER_START_TIMEOUT' } });
    expect(hang.error?.message).toBe('server "hang" did not start within 5000 ms');
    expect(hang.error?.hint).toMatch(/raise mcpServers\.hang\.startupTimeoutMs/);
    expect(hang.error?.details).toContain('fixture: waiting forever');
    expect(host.servers()[1]?.status).toBe('connected');
    // Every process it spawned (the SDK's probe sibling included) is gone.
    const spawned = readPids(pids);
    expect(spawned.length).toBeGreaterThan(0);
    await expect.poll(() => spawned.filter(alive), { timeout: 5000 }).toEqual([]);
  });

  it('close() resolves only once the server processes have exited', async () => {
    project = tempProject();
    const pids = join(project.dir, 'pids');
    const started = await startHost(project, {
      a: fixtureEntry('stdio-server.js', ['--pid-file', pids]),
      b: fixtureEntry('stdio-server.js', ['--pid-file', pids]),
    });
    await started.close();
    const spawned = readPids(pids);
    expect(spawned.filter(alive)).toEqual([]);
  });

  it('keeps working when its log directory cannot be written', async () => {
    project = tempProject();
    const notADir = project.write('a-file', 'x');
    host = await startHost(
      project,
      { s: fixtureEntry('stdio-server.js', ['--exit-at-start']), ok: fixtureEntry('stdio-server.js') },
      {
        logDir: join(notADir, 'logs'),
      },
    );
    const [s, ok] = host.servers();
    expect(ok?.status).toBe('connected');
    expect(s?.logFile).toBeUndefined();
    expect(s?.error?.details).toContain('fixture: missing configuration, exiting'); // the tail lives in memory
  });

  it('says so when the command does not exist', async () => {
    project = tempProject();
    host = await startHost(project, { ghost: { command: 'tack-no-such-command-xyz' } });
    const ghost = host.servers()[0]!;
    expect(ghost.error?.code).toBe('SERVER_START_FAILED');
    expect(ghost.error?.message).toMatch(/command not found: tack-no-such-command-xyz/);
    expect(ghost.error?.hint).toMatch(/PATH/);
  });

  it('turns a crash mid-call into an error naming the server, then restarts it on next use', async () => {
    project = tempProject();
    host = await startHost(project, { s: fixtureEntry('stdio-server.js') });
    const crash = await failure(host.callTool('mcp__s__crash', {}));
    expect(crash.code).toBe('SERVER_CRASHED');
    expect(crash.message).toMatch(/^server "s" exited with code 3 during tools\/call "crash"/);
    expect(crash.details).toContain('fixture: crashing on purpose');
    await expect.poll(() => host!.servers()[0]?.status).toBe('failed');

    const again = await host.callTool('mcp__s__echo', { text: 'back' });
    expect(again.content).toEqual([{ type: 'text', text: 'back' }]);
    expect(host.servers()[0]).toMatchObject({ status: 'connected', restarts: 1 });
  });

  it('keeps restarting a server that crashes every time, on next use, with capped backoff', async () => {
    project = tempProject();
    // FAST_RESTARTS: 20 ms doubling up to 100 ms.
    host = await startHost(project, { s: fixtureEntry('stdio-server.js') });
    for (let i = 0; i < 8; i++) {
      expect((await failure(host.callTool('mcp__s__crash', {}))).code).toBe('SERVER_CRASHED');
      await expect.poll(() => host!.servers()[0]?.status).toBe('failed');
    }
    // Eight crashes in a row: still promised a restart, no later than the cap.
    const down = host.servers()[0]!;
    expect(down.retryAt).toBeDefined();
    expect(down.retryAt! - Date.now()).toBeLessThanOrEqual(100);
    expect(down.error?.hint).toMatch(/restarts it on next use/);
    expect((await host.callTool('mcp__s__echo', { text: 'ok' })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
    expect(host.servers()[0]).toMatchObject({ status: 'connected', restarts: 8 });
  });

  it('quotes a banner printed on stdout and keeps working', async () => {
    project = tempProject();
    host = await startHost(project, { chatty: fixtureEntry('stdio-server.js', ['--banner']) });
    const chatty = host.servers()[0]!;
    expect(chatty.status).toBe('connected');
    expect(chatty.diagnostics).toEqual(['wrote non-protocol text on stdout: "Fixture server v1.2.3 ready!"']);
    expect((await host.callTool('mcp__chatty__echo', { text: 'ok' })).content).toEqual([
      { type: 'text', text: 'ok' },
    ]);
  });

  it('carries a 10 MB result, and recovers from one larger than the message limit', async () => {
    project = tempProject();
    host = await startHost(
      project,
      { big: fixtureEntry('stdio-server.js') },
      { maxMessageBytes: 16 * 1024 * 1024 },
    );
    const result = await host.callTool('mcp__big__big', { megabytes: 10 });
    const block = result.content?.[0];
    expect(block?.type === 'text' && block.text.length).toBe(10 * 1024 * 1024);

    const tooBig = await failure(host.callTool('mcp__big__big', { megabytes: 20 }));
    expect(tooBig.code).toBe('SERVER_CRASHED');
    expect(tooBig.message).toMatch(
      /^server "big" was disconnected: ReadBuffer exceeded maximum size of 16777216 bytes during tools\/call "big"$/,
    );
    expect((await host.callTool('mcp__big__echo', { text: 'fine' })).content).toEqual([
      { type: 'text', text: 'fine' },
    ]);
  });

  it('keeps the two error channels apart: isError results vs failed requests', async () => {
    project = tempProject();
    host = await startHost(project, { s: fixtureEntry('legacy-stdio-server.js') });
    const toolError = await host.callTool('mcp__s__fail', {});
    expect(toolError).toMatchObject({
      isError: true,
      content: [{ type: 'text', text: 'the tool failed on purpose' }],
    });
    // A tool the server does not have, asked for directly: the server answers with a JSON-RPC error.
    const refused = await failure(host.connection('s').callTool('no_such_tool', {}));
    expect(refused.code).toBe('REQUEST_FAILED');
    expect(refused.subject).toMatchObject({ server: 's', tool: 'no_such_tool' });
    expect(refused.message).toMatch(/tools\/call "no_such_tool" on server "s" failed/);
  });

  it('delivers progress, honours an AbortSignal, and times out a silent call', async () => {
    project = tempProject();
    host = await startHost(project, { s: fixtureEntry('stdio-server.js', [], { callTimeoutMs: 1000 }) });
    const progress: string[] = [];
    const done = await host.callTool(
      'mcp__s__slow',
      { steps: 3, delayMs: 400 },
      {
        onProgress: (p) => progress.push(`${p.progress}/${p.total} ${p.message}`),
      },
    );
    // 3 × 400 ms > the 1000 ms timeout: progress notifications keep the call alive. (At 150 ms against 400 ms, a
    // loaded machine that delivered one notification 250 ms late timed the call out.)
    expect(done.content).toEqual([{ type: 'text', text: 'done after 3 steps' }]);
    // The SDK dispatches notifications a tick after responses, so the last one may land after the result.
    expect(progress.slice(0, 2)).toEqual(['1/3 step 1', '2/3 step 2']);

    const timeout = await failure(host.callTool('mcp__s__slow', { steps: 1, delayMs: 2000 }));
    expect(timeout.code).toBe('REQUEST_TIMEOUT');
    expect(timeout.message).toBe('tools/call "slow" on server "s" timed out after 1000 ms without progress');

    const controller = new AbortController();
    setTimeout(() => controller.abort(), 100);
    const aborted = await failure(
      host.callTool(
        'mcp__s__slow',
        { steps: 1, delayMs: 2000 },
        { signal: controller.signal, timeoutMs: 10_000 },
      ),
    );
    expect(aborted.code).toBe('REQUEST_ABORTED');
    expect(host.servers()[0]?.status).toBe('connected');
  });
});

describe('tool lists that change at runtime', () => {
  it('listen again after a 2026-07-28 server drops the stream, and hear later changes', async () => {
    using project = tempProject();
    let fixture = await startHttpFixture();
    const port = fixture.port;
    const host = await startHost(project, { h: { type: 'http', url: fixture.url } });
    try {
      await fixture.close(); // drops the listen stream while the host sits idle
      fixture = await startHttpFixture({ port });
      await expect
        .poll(() => readFileSync(host.servers()[0]!.logFile!, 'utf8'), { timeout: 5000 })
        .toMatch(/listen stream down; listening again in 1000 ms/);
      const changed = nextEvent(
        host,
        (e) => e.type === 'catalog' && e.server === 'h' && e.change === 'tools',
      );
      // Keep asking for a new tool until the re-opened stream carries the notification back.
      const added = (async () => {
        for (let i = 0; i < 20; i++) {
          await host.callTool('mcp__h__add_tool', { name: `again_${i}` });
          if (
            await Promise.race([
              changed.then(() => true),
              new Promise((r) => setTimeout(() => r(false), 500)),
            ])
          )
            return;
        }
      })();
      await changed;
      await added;
      expect(host.servers()[0]?.status).toBe('connected');
    } finally {
      await host.close();
      await fixture.close();
    }
  });

  it('refresh the catalog on list_changed: 2026-07-28 over Streamable HTTP (listen stream)', async () => {
    using project = tempProject();
    const fixture = await startHttpFixture();
    const host = await startHost(project, { h: { type: 'http', url: fixture.url } });
    try {
      expect(host.servers()[0]?.era).toBe('modern');
      const changed = nextEvent(host, (e) => e.type === 'catalog' && e.server === 'h');
      await host.callTool('mcp__h__add_tool', { name: 'late_http' });
      await changed;
      expect((await host.callTool('mcp__h__late_http', {})).content).toEqual([
        { type: 'text', text: 'late_http ran' },
      ]);
    } finally {
      await host.close();
      await fixture.close();
    }
  });

  for (const [era, script] of [
    ['2026-07-28 (listen stream)', 'stdio-server.js'],
    ['2025 (unsolicited notification)', 'legacy-stdio-server.js'],
  ] as const) {
    it(`refresh the catalog on list_changed: ${era}`, async () => {
      using project = tempProject();
      const host = await startHost(project, { s: fixtureEntry(script) });
      try {
        expect(host.catalog.getTool('mcp__s__late')).toBeUndefined();
        const changed = nextEvent(host, (e) => e.type === 'catalog' && e.server === 's');
        await host.callTool('mcp__s__add_tool', { name: 'late' });
        await changed;
        expect(host.catalog.getTool('mcp__s__late')?.definition.description).toBe(
          'A tool added at runtime (late).',
        );
        expect((await host.callTool('mcp__s__late', {})).content).toEqual([
          { type: 'text', text: 'late ran' },
        ]);
      } finally {
        await host.close();
      }
    });
  }
});

describe('lifecycle races', () => {
  it('never leaves a process behind when the start deadline passes during the era probe', async () => {
    using project = tempProject();
    const pids = join(project.dir, 'pids');
    const host = await startHost(project, {
      slow: fixtureEntry('stdio-server.js', ['--delay-start', '800', '--pid-file', pids], {
        startupTimeoutMs: 300,
      }),
    });
    try {
      expect(host.servers()[0]).toMatchObject({ status: 'failed', error: { code: 'SERVER_START_TIMEOUT' } });
      // Give a late probe answer every chance to spawn the real process, then look for survivors.
      await new Promise((resolve) => setTimeout(resolve, 1500));
      const spawned = readPids(pids);
      await expect.poll(() => spawned.filter(alive), { timeout: 5000 }).toEqual([]);
      expect(readFileSync(pids, 'utf8').trim().split('\n').map(Number)).toEqual(spawned);
    } finally {
      await host.close();
    }
  });

  it('a second connectAll() on connected servers starts nothing new', async () => {
    using project = tempProject();
    const pids = join(project.dir, 'pids');
    const host = await startHost(project, { s: fixtureEntry('stdio-server.js', ['--pid-file', pids]) });
    const before = readFileSync(pids, 'utf8');
    await host.connectAll();
    expect(readFileSync(pids, 'utf8')).toBe(before);
    await host.close();
    const spawned = before.trim().split('\n').map(Number);
    expect(spawned.filter(alive)).toEqual([]);
  });

  it('restart() while the server is still starting ends connected, with one live process', async () => {
    using project = tempProject();
    const pids = join(project.dir, 'pids');
    const config = project.config({
      s: fixtureEntry('stdio-server.js', ['--delay-start', '300', '--pid-file', pids]),
    });
    const { McpHost } = await import('../../src/mcp/host.js');
    const host = new McpHost({ config });
    try {
      const first = host.connectAll();
      await new Promise((resolve) => setTimeout(resolve, 50));
      await host.restart('s');
      await first;
      expect(host.servers()[0]?.status).toBe('connected');
      expect((await host.callTool('mcp__s__echo', { text: 'ok' })).content).toEqual([
        { type: 'text', text: 'ok' },
      ]);
      const spawned = readPids(pids);
      await expect.poll(() => spawned.filter(alive).length, { timeout: 5000 }).toBe(1);
    } finally {
      await host.close();
    }
  });
});
