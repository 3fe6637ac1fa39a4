import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { startHttpFixture } from '../fixtures/servers/http-server.js';
import { onFreePort, startService } from '../helpers/processes.js';
import { EVERYTHING, startHost, tempProject } from '../helpers/project.js';

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
    let port = 0;
    const sse = await onFreePort((free) => {
      port = free;
      return startService(process.execPath, [EVERYTHING, 'sse'], {
        env: { ...process.env, PORT: String(free) },
        ready: /running on port/,
      });
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
    // Port 1 (tcpmux): nothing listens there and no test binds it, so the connection is refused every time (a
    // port found free and closed again could be taken by another test file meanwhile).
    const dead = 1;
    const host = await startHost(
      project,
      { gone: { type: 'http', url: `http://127.0.0.1:${dead}/mcp` }, up: { type: 'http', url: fixture.url } },
      { restartPolicy: { initialDelayMs: 60_000, maxDelayMs: 60_000 } }, // no retry during the test
    );
    try {
      const [gone, up] = host.servers();
      expect(up?.status).toBe('connected');
      expect(gone).toMatchObject({ status: 'failed', error: { code: 'SERVER_START_FAILED' } });
      expect(gone?.error?.message).toMatch(/^server "gone" failed to start: .*(fetch failed|ECONNREFUSED)/);
      expect(gone?.retryAt).toBeGreaterThan(0);
    } finally {
      await host.close();
      await fixture.close();
    }
  });

  it('report an HTTP error status as a failed request, without dropping the connection', async () => {
    using project = tempProject();
    const fixture = await startHttpFixture();
    // A proxy in front of the fixture that answers 500 to any request mentioning "http500".
    const proxy = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      const body = Buffer.concat(chunks);
      if (body.includes('http500')) {
        res.writeHead(500, { 'content-type': 'text/plain' }).end('internal error');
        return;
      }
      const headers = Object.fromEntries(
        Object.entries(req.headers).filter(
          ([k, v]) => typeof v === 'string' && k !== 'host' && k !== 'content-length',
        ),
      ) as Record<string, string>;
      const upstream = await fetch(fixture.url, {
        method: req.method,
        headers,
        body: body.length ? body : undefined,
      });
      res.writeHead(upstream.status, Object.fromEntries(upstream.headers));
      if (upstream.body) Readable.fromWeb(upstream.body as never).pipe(res);
      else res.end();
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}/mcp`;
    const host = await startHost(project, { h: { type: 'http', url } });
    try {
      expect(host.servers()[0]?.status).toBe('connected');
      const error = await host.callTool('mcp__h__echo', { text: 'http500' }).catch((e: Error) => e);
      expect(error).toMatchObject({ code: 'REQUEST_FAILED', subject: { server: 'h', tool: 'echo' } });
      expect((error as { hint?: string }).hint).toMatch(/HTTP error/);
      expect(host.servers()[0]).toMatchObject({ status: 'connected', restarts: 0 });
      expect((await host.callTool('mcp__h__echo', { text: 'fine' })).content).toEqual([
        { type: 'text', text: 'fine' },
      ]);
    } finally {
      await host.close();
      proxy.closeAllConnections();
      proxy.close();
      await fixture.close();
    }
  });
});
