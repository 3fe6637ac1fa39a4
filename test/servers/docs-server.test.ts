import { cpSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { describe, expect, it } from 'vitest';
import { startDocsServer } from '../../src/servers/docs/start.js';
import { BIN } from '../helpers/cli.js';
import { postJsonRpc } from '../helpers/http.js';
import { REPO, startHost, tempProject } from '../helpers/project.js';

const FIXTURE = join(REPO, 'test', 'fixtures', 'docs');
const PING = { jsonrpc: '2.0', id: 1, method: 'ping' };

function copyOfFixture(dir: string): string {
  const root = join(dir, 'docs');
  cpSync(FIXTURE, root, { recursive: true });
  return root;
}

describe('tack serve-docs', () => {
  it('serves search_docs, read_doc and doc:// resources over stdio to the host', async () => {
    using project = tempProject();
    const host = await startHost(project, {
      docs: { command: process.execPath, args: [BIN, 'serve-docs', FIXTURE] },
    });
    try {
      expect(host.servers()[0]).toMatchObject({
        status: 'connected',
        era: 'modern',
        serverInfo: { name: 'tack-docs' },
      });
      const search = host.catalog.getTool('mcp__docs__search_docs')!.definition;
      expect(search.outputSchema?.properties).toHaveProperty('results');
      expect(search.description).toMatch(/Use it first/);

      const found = await host.callTool('mcp__docs__search_docs', { query: 'warm start process', k: 2 });
      const results = (found.structuredContent as { results: Array<{ slug: string; score: number }> })
        .results;
      expect(results[0]?.slug).toBe('era-cache');
      expect(results.length).toBeLessThanOrEqual(2);
      expect(found.content?.[0]).toMatchObject({
        type: 'text',
        text: expect.stringMatching(/^era-cache \(/),
      });

      const read = await host.callTool('mcp__docs__read_doc', { slug: 'guides/install', max_words: 5 });
      // Five words: "#", "Install", "Run", "`npm", "ci`".
      expect(read.content?.[0]).toMatchObject({
        text: '# Installing tack\n\n# Install\n\nRun `npm ci`\n\n[21 more words: read_doc with a larger max_words, or doc://guides/install]',
      });

      const missing = await host.callTool('mcp__docs__read_doc', { slug: 'install' });
      expect(missing.isError).toBe(true);
      expect(missing.content?.[0]).toMatchObject({
        text: 'No document with slug "install". Did you mean: guides/install, windows, era-cache? search_docs finds slugs.',
      });

      const listed = host.catalog.listingsOf('docs')!;
      expect(listed.resources.map((r) => r.uri)).toContain('doc://guides/install');
      expect(listed.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['doc://{+slug}']);
      const full = await host.readResource('doc://guides/configure');
      expect(full.contents[0]).toMatchObject({
        mimeType: 'text/markdown',
        text: expect.stringContaining('# Configure servers'),
      });
      await expect(host.readResource('doc://nope', { server: 'docs' })).rejects.toMatchObject({
        code: 'REQUEST_FAILED',
      });
    } finally {
      await host.close();
    }
  });

  it('answers a 2025-era client too, and sends resources/updated to the URIs it subscribed to', async () => {
    using project = tempProject();
    const root = copyOfFixture(project.dir);
    const client = new Client({ name: 'legacy-client', version: '1' }); // default mode: 2025 initialize only
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve-docs', root],
        stderr: 'ignore',
      }),
    );
    try {
      expect(client.getProtocolEra()).toBe('legacy');
      const updated: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', async (n) => {
        updated.push(n.params.uri);
      });
      await client.subscribeResource({ uri: 'doc://era-cache' });
      writeFileSync(join(root, 'windows.md'), '# not subscribed');
      writeFileSync(join(root, 'era-cache.md'), '# The era cache, rewritten');
      await expect.poll(() => updated, { timeout: 5000 }).toEqual(['doc://era-cache']);
      const read = await client.readResource({ uri: 'doc://era-cache' });
      expect(read.contents[0]).toMatchObject({ text: '# The era cache, rewritten' });
    } finally {
      await client.close();
    }
  });

  it('serves Streamable HTTP and tells listening clients about new and changed documents', async () => {
    using project = tempProject();
    const root = copyOfFixture(project.dir);
    const server = await startDocsServer({ folder: root, http: { port: 0 } });
    const client = new Client(
      { name: 'modern-client', version: '1' },
      { versionNegotiation: { mode: 'auto' } },
    );
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url!)));
      expect(client.getProtocolEra()).toBe('modern');
      const events: string[] = [];
      client.setNotificationHandler('notifications/resources/list_changed', async () => {
        events.push('list_changed');
      });
      client.setNotificationHandler('notifications/resources/updated', async (n) => {
        events.push(`updated ${n.params.uri}`);
      });
      const subscription = await client.listen({
        resourcesListChanged: true,
        resourceSubscriptions: ['doc://windows'],
      });
      writeFileSync(join(root, 'added.md'), '# Added later');
      await expect.poll(() => events, { timeout: 5000 }).toContain('list_changed');
      writeFileSync(join(root, 'windows.md'), '# Windows, edited');
      await expect.poll(() => events, { timeout: 5000 }).toContain('updated doc://windows');
      const search = await client.callTool({ name: 'search_docs', arguments: { query: 'added later' } });
      expect((search.structuredContent as { results: Array<{ slug: string }> }).results[0]?.slug).toBe(
        'added',
      );
      await subscription.close();
    } finally {
      await client.close();
      await server.close();
    }
  });
});

describe('the HTTP guard in front of every tack server', () => {
  it('refuses foreign Host and Origin headers (DNS rebinding) and other paths', async () => {
    const server = await startDocsServer({ folder: FIXTURE, http: { port: 0 }, watch: false });
    try {
      const url = new URL(server.url!);
      const post = (headers: Record<string, string>, path = '/mcp') =>
        postJsonRpc(new URL(path, url), PING, headers);
      expect((await post({ origin: 'http://evil.example' })).status).toBe(403);
      expect((await post({ origin: `http://localhost:${url.port}` })).status).not.toBe(403);
      expect((await post({}, '/other')).status).toBe(404);
      // fetch will not let us forge Host; a raw request does.
      const { request } = await import('node:http');
      const status = await new Promise<number>((resolve) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: url.port,
            path: '/mcp',
            method: 'POST',
            headers: { host: 'evil.example', 'content-type': 'application/json' },
          },
          (res) => resolve(res.statusCode ?? 0),
        );
        req.end(JSON.stringify(PING));
      });
      expect(status).toBe(403);
    } finally {
      await server.close();
    }
  });

  it('asks for the bearer token with a 401 and WWW-Authenticate, and lets the right one in', async () => {
    using project = tempProject();
    const server = await startDocsServer({
      folder: FIXTURE,
      http: { port: 0, token: 's3cret-token' },
      watch: false,
    });
    try {
      const post = (authorization?: string) =>
        postJsonRpc(server.url!, PING, authorization ? { authorization } : {});
      const none = await post();
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="tack", error="invalid_request"');
      const wrong = await post('Bearer nope');
      expect(wrong.status).toBe(401);
      expect(wrong.headers.get('www-authenticate')).toBe('Bearer realm="tack", error="invalid_token"');
      expect((await post('Bearer s3cret-token-but-longer')).status).toBe(401);
      expect((await post('Basic s3cret-token')).status).toBe(401);
      expect((await post('bearer s3cret-token')).status).not.toBe(401); // the scheme is case-insensitive

      // An HTTP server that failed reconnects in the background after the first restart delay: make that
      // delay outlast the assertions, or `denied` may already read "connecting" again.
      const slowRetry = { initialDelayMs: 60_000, maxDelayMs: 60_000 };
      const host = await startHost(
        project,
        {
          docs: { type: 'http', url: server.url, headers: { Authorization: 'Bearer s3cret-token' } },
          denied: { type: 'http', url: server.url },
        },
        { restartPolicy: slowRetry },
      );
      try {
        expect(host.servers().map((s) => s.status)).toEqual(['connected', 'failed']);
        expect(host.servers()[1]?.error?.message).toMatch(/401|nauthorized/);
      } finally {
        await host.close();
      }
    } finally {
      await server.close();
    }
  });

  it("takes the token and allowed hosts from the configuration's serve section, as tack serve does", async () => {
    const server = await startDocsServer({
      folder: FIXTURE,
      http: { host: '0.0.0.0', port: 0 },
      serve: { token: 'from-config', allowedHosts: ['127.0.0.1'] },
      watch: false,
    });
    try {
      const url = new URL(server.url!);
      const post = (authorization: string) =>
        postJsonRpc(`http://127.0.0.1:${url.port}/mcp`, PING, { authorization });
      expect((await post('Bearer wrong')).status).toBe(401);
      const client = new Client({ name: 'remote', version: '1' }, { versionNegotiation: { mode: 'auto' } });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${url.port}/mcp`), {
          requestInit: { headers: { Authorization: 'Bearer from-config' } },
        }),
      );
      try {
        expect((await client.listTools()).tools.map((t) => t.name)).toContain('search_docs');
      } finally {
        await client.close();
      }
    } finally {
      await server.close();
    }
  });

  it('will not bind beyond loopback without a token and allowed hosts', async () => {
    await expect(
      startDocsServer({ folder: FIXTURE, http: { host: '0.0.0.0', port: 0 }, watch: false }),
    ).rejects.toMatchObject({
      code: 'USAGE',
      message: 'refusing to serve on 0.0.0.0 without a bearer token and allowed hosts',
    });
  });
});

describe('2025-era sessions over HTTP', () => {
  it('keeps a session whose client listens on its GET stream, and closes one that went silent', async () => {
    using project = tempProject();
    const root = copyOfFixture(project.dir);
    const server = await startDocsServer({
      folder: root,
      // 1 s idle, not less: the listening client's session is idle from its last request until the SDK has its
      // GET stream open, which on a loaded machine took more than the 300 ms this once allowed.
      http: { port: 0, legacySessions: { idleMs: 1000, sweepIntervalMs: 50 } },
    });
    const client = new Client({ name: 'legacy-client', version: '1' }); // 2025 initialize, then a GET stream
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url!)));
      expect(client.getProtocolEra()).toBe('legacy');
      const silent = await initializeBare(server.url!);

      await new Promise((resolve) => setTimeout(resolve, 2500)); // many sweeps, the later ones past idleMs
      let listChanged = 0;
      client.setNotificationHandler('notifications/resources/list_changed', async () => {
        listChanged++;
      });
      writeFileSync(join(root, 'added.md'), '# Added while listening');
      await expect.poll(() => listChanged, { timeout: 5000 }).toBeGreaterThan(0); // the GET stream is alive
      expect((await client.listTools()).tools.map((t) => t.name)).toContain('search_docs');

      const ping = await postJsonRpc(
        server.url!,
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { 'mcp-session-id': silent, 'mcp-protocol-version': '2025-11-25' },
      );
      expect(ping.status).toBe(404); // no request, no stream: swept
    } finally {
      await client.close();
      await server.close();
    }
  });
});

/** A 2025-era session opened with a bare initialize, and nothing after it; resolves with its id. */
async function initializeBare(url: string): Promise<string> {
  const response = await postJsonRpc(url, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bare', version: '1' } },
  });
  await response.text();
  const id = response.headers.get('mcp-session-id');
  expect(id).toBeTruthy();
  return id!;
}
