import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { startHttpFixture } from '../fixtures/servers/http-server.js';
import { freePort, startService } from '../helpers/processes.js';
import { startHost, tempProject } from '../helpers/project.js';

const EVERYTHING = createRequire(import.meta.url).resolve(
  '@modelcontextprotocol/server-everything/dist/index.js',
);

describe('HTTP servers', () => {
  it('send the configured headers, with tokens from the environment', async () => {
    process.env.TACK_TEST_TOKEN = 'tok-123';
    using project = tempProject();
    delete process.env.TACK_TEST_TOKEN;
    const fixture = await startHttpFixture();
    const host = await startHost(project, {
      h: {
        type: 'http',
        url: fixture.url,
        headers: { Authorization: 'Bearer ${TACK_TEST_TOKEN}', 'X-Team': 'core' },
      },
    });
    try {
      await host.callTool('mcp__h__echo', { text: 'x' });
      expect(fixture.requests.length).toBeGreaterThan(1);
      for (const headers of fixture.requests) {
        expect(headers.authorization).toBe('Bearer tok-123');
        expect(headers['x-team']).toBe('core');
      }
    } finally {
      await host.close();
      await fixture.close();
    }
  });

  it('fall back to legacy SSE when the URL has no Streamable HTTP, and remember it', async () => {
    using project = tempProject();
    const port = await freePort();
    const sse = await startService(process.execPath, [EVERYTHING, 'sse'], {
      env: { ...process.env, PORT: String(port) },
      ready: /running on port/,
    });
    try {
      const servers = { old: { type: 'http', url: `http://127.0.0.1:${port}/sse` } };
      const first = await startHost(project, servers);
      expect(first.servers()[0]).toMatchObject({ status: 'connected', transport: 'sse', era: 'legacy' });
      expect((await first.callTool('mcp__old__get-sum', { a: 1, b: 2 })).content?.[0]).toMatchObject({
        text: expect.stringContaining('3'),
      });
      await first.close();
      const second = await startHost(project, servers);
      expect(second.servers()[0]).toMatchObject({
        status: 'connected',
        transport: 'sse',
        eraSource: 'cache',
      });
      await second.close();
    } finally {
      await sse.stop();
    }
  });

  it('reconnect with backoff when the server goes away and comes back on the same port', async () => {
    using project = tempProject();
    let fixture = await startHttpFixture();
    const port = fixture.port;
    const host = await startHost(project, { h: { type: 'http', url: fixture.url } });
    try {
      expect(host.servers()[0]?.status).toBe('connected');
      await fixture.close();
      const down = await host.callTool('mcp__h__echo', { text: 'x' }).catch((error: Error) => error);
      expect(down).toMatchObject({ code: 'SERVER_UNAVAILABLE', subject: { server: 'h' } });
      expect(host.servers()[0]?.status).not.toBe('connected');

      fixture = await startHttpFixture({ port });
      // No call needed: the host reconnects in the background (FAST_RESTARTS in tests).
      await expect.poll(() => host.servers()[0]?.status, { timeout: 10_000 }).toBe('connected');
      expect((await host.callTool('mcp__h__echo', { text: 'back' })).content).toEqual([
        { type: 'text', text: 'back' },
      ]);
    } finally {
      await host.close();
      await fixture.close();
    }
  });

  it('report an unreachable server without blocking the others', async () => {
    using project = tempProject();
    const fixture = await startHttpFixture();
    const dead = await freePort();
    const host = await startHost(
      project,
      { gone: { type: 'http', url: `http://127.0.0.1:${dead}/mcp` }, up: { type: 'http', url: fixture.url } },
      { restartPolicy: { initialDelayMs: 60_000, maxDelayMs: 60_000, maxAttempts: 3 } }, // no retry during the test
    );
    try {
      const [gone, up] = host.servers();
      expect(up?.status).toBe('connected');
      expect(gone).toMatchObject({ status: 'failed', error: { code: 'SERVER_START_FAILED' } });
      expect(gone?.error?.message).toMatch(/server "gone" failed to start: .*fetch failed|ECONNREFUSED/);
      expect(gone?.retryAt).toBeGreaterThan(0);
    } finally {
      await host.close();
      await fixture.close();
    }
  });
});
