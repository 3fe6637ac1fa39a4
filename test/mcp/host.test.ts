import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpHost } from '../../src/mcp/host.js';
import { type HttpFixture, startHttpFixture } from '../fixtures/servers/http-server.js';
import { onFreePort, type Service, startService } from '../helpers/processes.js';
import { EVERYTHING, fixtureEntry, startHost, type TempProject, tempProject } from '../helpers/project.js';

describe('one host, every kind of server at once', () => {
  let project: TempProject;
  let http: HttpFixture;
  let everythingHttp: Service;
  let everythingSse: Service;
  let host: McpHost;
  let ports: { http: number; sse: number };

  beforeAll(async () => {
    project = tempProject();
    ports = { http: 0, sse: 0 };
    // server-everything listens on PORT: onFreePort tries another when a parallel test file took the one found.
    [http, everythingHttp, everythingSse] = await Promise.all([
      startHttpFixture(),
      onFreePort((port) => {
        ports.http = port;
        return startService(process.execPath, [EVERYTHING, 'streamableHttp'], {
          env: { ...process.env, PORT: String(port) },
          ready: /listening on port/,
        });
      }),
      onFreePort((port) => {
        ports.sse = port;
        return startService(process.execPath, [EVERYTHING, 'sse'], {
          env: { ...process.env, PORT: String(port) },
          ready: /running on port/,
        });
      }),
    ]);
    host = await startHost(project, {
      modern: fixtureEntry('stdio-server.js'),
      legacy: fixtureEntry('legacy-stdio-server.js'),
      'modern-http': { type: 'http', url: http.url },
      everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
      'everything-http': { type: 'http', url: `http://127.0.0.1:${ports.http}/mcp` },
      'everything-sse': { type: 'sse', url: `http://127.0.0.1:${ports.sse}/sse` },
    });
  }, 60_000);

  afterAll(async () => {
    await host?.close();
    await Promise.all([http?.close(), everythingHttp?.stop(), everythingSse?.stop()]);
    project?.[Symbol.dispose]();
  });

  it('connects to all of them and reports each era and negotiated version', () => {
    const servers = Object.fromEntries(host.servers().map((s) => [s.name, s]));
    for (const server of Object.values(servers)) expect(server.status, server.name).toBe('connected');
    expect(servers.modern).toMatchObject({
      era: 'modern',
      protocolVersion: '2026-07-28',
      transport: 'stdio',
    });
    expect(servers['modern-http']).toMatchObject({
      era: 'modern',
      protocolVersion: '2026-07-28',
      transport: 'streamable-http',
    });
    expect(servers.legacy).toMatchObject({
      era: 'legacy',
      protocolVersion: '2025-11-25',
      transport: 'stdio',
    });
    expect(servers.everything).toMatchObject({ era: 'legacy', transport: 'stdio' });
    expect(servers['everything-http']).toMatchObject({ era: 'legacy', transport: 'streamable-http' });
    expect(servers['everything-sse']).toMatchObject({ era: 'legacy', transport: 'sse' });
    expect(servers.everything?.serverInfo?.name).toBe('mcp-servers/everything');
    expect(servers.modern?.serverInfo).toEqual({ name: 'tack-fixture', version: '1.2.3' });
    expect(servers.modern?.instructions).toMatch(/Fixture server/);
    for (const server of Object.values(servers)) {
      expect(server.counts.tools, server.name).toBeGreaterThan(0);
      expect(server.connectMs, server.name).toBeGreaterThan(0);
    }
  });

  it('lists every tool under a unique mcp__<server>__<tool> name', () => {
    const names = host.catalog.tools.map((tool) => tool.name);
    expect(new Set(names).size).toBe(names.length);
    for (const server of ['modern', 'legacy', 'modern-http']) {
      expect(names).toContain(`mcp__${server}__echo`);
    }
    for (const server of ['everything', 'everything-http', 'everything-sse']) {
      expect(names).toContain(`mcp__${server}__echo`);
      expect(names).toContain(`mcp__${server}__get-sum`);
    }
  });

  it('calls tools on every server, routing by the catalog name', async () => {
    for (const server of ['modern', 'legacy', 'modern-http']) {
      const result = await host.callTool(`mcp__${server}__echo`, { text: `hi ${server}` });
      expect(result.content).toEqual([{ type: 'text', text: `hi ${server}` }]);
    }
    for (const server of ['everything', 'everything-http', 'everything-sse']) {
      const result = await host.callTool(`mcp__${server}__echo`, { message: 'ping' });
      expect(result.content?.[0]).toMatchObject({ type: 'text', text: expect.stringContaining('ping') });
    }
  });

  it('keeps structuredContent and every content block type', async () => {
    const sum = await host.callTool('mcp__modern-http__add', { a: 2, b: 40 });
    expect(sum.structuredContent).toEqual({ sum: 42 });
    const image = await host.callTool('mcp__legacy__image', {});
    expect(image.content?.map((block) => block.type)).toEqual(['image', 'resource_link']);
    expect(image.content?.[0]).toMatchObject({ mimeType: 'image/png' });
  });

  it('tells the era apart inside the server too (the modern link really is 2026-07-28)', async () => {
    const modern = await host.callTool('mcp__modern__era', {});
    const http = await host.callTool('mcp__modern-http__era', {});
    expect(modern.content).toEqual([{ type: 'text', text: 'modern' }]);
    expect(http.content).toEqual([{ type: 'text', text: 'modern' }]);
  });

  it('reads resources (listed and templated) and gets prompts per server', async () => {
    const readme = await host.readResource('memo://readme', { server: 'modern-http' });
    expect(readme.contents).toEqual([
      { uri: 'memo://readme', mimeType: 'text/plain', text: 'fixture readme' },
    ]);
    const note = await host.readResource('memo://notes/7', { server: 'legacy' });
    expect(note.contents[0]).toMatchObject({ text: '# Note 7' });
    const dynamic = await host.readResource('demo://resource/dynamic/text/1', { server: 'everything-sse' });
    expect(dynamic.contents[0]?.uri).toBe('demo://resource/dynamic/text/1');

    const greet = await host.getPrompt('modern', 'greet', { name: 'Ada' });
    expect(greet.messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Ada.' });
    const simple = await host.getPrompt('everything-http', 'simple-prompt');
    expect(simple.messages.length).toBeGreaterThan(0);

    const listings = host.catalog.listingsOf('modern');
    expect(listings?.resources.map((r) => r.uri)).toEqual(['memo://readme']);
    expect(listings?.resourceTemplates.map((t) => t.uriTemplate)).toEqual(['memo://notes/{id}']);
    expect(listings?.prompts.map((p) => p.name)).toEqual(['greet']);
  });

  it('finds the one server behind a URI when none is named, and refuses to guess between two', async () => {
    const only = await host.readResource('demo://resource/dynamic/text/2', {}).catch((e: Error) => e);
    // Three everything servers offer that template: the host must not pick one silently.
    expect(only).toBeInstanceOf(Error);
    expect((only as Error).message).toMatch(
      /offered by several servers: everything, everything-http, everything-sse/,
    );
  });
});
