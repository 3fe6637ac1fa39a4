import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { TackStore } from '../../src/store/store.js';
import { tack } from '../helpers/cli.js';
import { startEmbeddingsServer } from '../helpers/embeddings-server.js';
import { REPO, tempProject } from '../helpers/project.js';

const EXAMPLES = join(REPO, 'dist', 'examples', 'servers');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

describe('tool search for other hosts and on the command line', () => {
  it('tack serve with serve.toolSearch on offers search_tools and call_tool instead of the list', async () => {
    using project = tempProject();
    project.write('tack.json', {
      serve: { toolSearch: 'on' },
      mcpServers: {
        notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
        weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')] },
      },
    });
    const gateway = await startGateway({ config: project.load(), http: { host: '127.0.0.1', port: 0 } });
    cleanups.push(() => gateway.close());
    const client = new Client({ name: 'eager-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    cleanups.push(() => client.close());
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['search_tools', 'call_tool']);
    const found = await client.callTool({
      name: 'search_tools',
      arguments: { query: 'weather forecast', k: 2 },
    });
    expect(text(found)).toMatch(/^1\. weather__get_forecast \(server weather\)/);
    const called = await client.callTool({
      name: 'call_tool',
      arguments: { name: 'weather__get_forecast', arguments: { city: 'Berlin' } },
    });
    expect(called.isError).toBeFalsy();
    expect(text(called)).toMatch(/^Berlin: /);
    await expect(
      client.callTool({ name: 'call_tool', arguments: { name: 'nope__x', arguments: {} } }),
    ).rejects.toThrow(/Unknown tool: nope__x/);
  });

  it('tack serve takes several queries, fuses toolSearch.embeddings, and ranks lexically when that endpoint is down', async () => {
    const endpoint = await startEmbeddingsServer({ concepts: { umbrella: 'weather', forecast: 'weather' } });
    cleanups.push(() => endpoint.close());
    using project = tempProject();
    project.write('tack.json', {
      serve: { toolSearch: 'on' },
      toolSearch: { embeddings: { model: 'openai-compatible:toy-embed', baseURL: endpoint.url } },
      mcpServers: {
        notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
        weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')] },
      },
    });
    const warnings: string[] = [];
    const gateway = await startGateway({
      config: project.load(),
      http: { host: '127.0.0.1', port: 0 },
      onWarning: (w) => warnings.push(w.code),
    });
    cleanups.push(() => gateway.close());
    const client = new Client({ name: 'eager-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    cleanups.push(() => client.close());
    const search = async (args: Record<string, unknown>) => {
      const result = await client.callTool({ name: 'search_tools', arguments: args });
      return {
        text: text(result),
        structured: result.structuredContent as { tools: Array<{ name: string }>; semantic: string },
      };
    };
    // Two needs in one call; "umbrella" is in no definition, the toy embedding model knows it is weather.
    const both = await search({ queries: ['umbrella', 'remember something'], k: 4 });
    expect(both.structured.semantic).toBe('used');
    const found = both.structured.tools.map((t) => t.name);
    expect(found).toEqual(expect.arrayContaining(['weather__get_forecast', 'notes__add_note']));
    expect(both.text).toMatch(
      /\(server weather\)[\s\S]*\(server notes\)|\(server notes\)[\s\S]*\(server weather\)/,
    );
    const lexical = await search({ query: 'umbrella' });
    expect(lexical.structured.tools[0]!.name).toBe('weather__get_forecast');

    endpoint.setFailing(true);
    const down = await search({ queries: ['weather forecast', 'add a note'], k: 2 });
    expect(down.structured.semantic).toBe('unavailable');
    expect(down.structured.tools.map((t) => t.name).sort()).toEqual([
      'notes__add_note',
      'weather__get_forecast',
    ]);
    expect(warnings).toEqual(['SEMANTIC_SEARCH_UNAVAILABLE']);
    const bad = await client.callTool({ name: 'search_tools', arguments: { queries: [] } });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/give "queries"/);
  });

  it('tack tools search ranks the catalog with scores, and --explain says why each tool matched', async () => {
    using project = tempProject();
    project.write('tack.json', {
      mcpServers: {
        notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
        weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')] },
      },
    });
    const run = await tack(['tools', 'search', 'weather forecast', '--json'], {
      cwd: project.dir,
      env: project.env,
    });
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<{ name: string; score: number }>;
    expect(rows[0]!.name).toBe('mcp__weather__get_forecast');
    expect(rows[0]!.score).toBeGreaterThan(rows.at(-1)!.score);

    const explained = await tack(
      ['tools', 'search', 'weather forecast', 'remember a note', '--explain', '-k', '3'],
      {
        cwd: project.dir,
        env: project.env,
      },
    );
    expect(explained.code).toBe(0);
    expect(explained.stdout).toMatch(/^[\d.]+ {2}mcp__weather__get_forecast {2}\(server weather\)$/m);
    expect(explained.stdout).toMatch(/^ {4}matched: .*forecast \((?:name, )?title, description\)/m);
    expect(explained.stdout).toMatch(/^ {4}ranks: 1 for "weather forecast"/m);
    expect(explained.stdout).toMatch(/^[\d.]+ {2}mcp__notes__add_note {2}\(server notes\)$/m);
    expect(explained.stdout).toContain('semantic ranking: off');
  });

  it('tack tools examples export and import: learned examples round-trip between stores as JSONL', async () => {
    using from = tempProject();
    from.write('tack.json', { mcpServers: {} });
    const source = TackStore.open(from.load().paths.storeFile);
    source.toolExamples.record('weather', 'get_forecast', 'will it rain in Oslo', '2026-01-02T03:04:05.000Z');
    source.toolExamples.record('notes', 'add_note', 'remember to call Ana', '2026-01-03T00:00:00.000Z');
    source.close();
    const exported = await tack(['tools', 'examples', 'export'], { cwd: from.dir, env: from.env });
    expect(exported.code).toBe(0);
    expect(
      exported.stdout
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l)),
    ).toEqual([
      {
        server: 'weather',
        tool: 'get_forecast',
        query: 'will it rain in Oslo',
        at: '2026-01-02T03:04:05.000Z',
      },
      { server: 'notes', tool: 'add_note', query: 'remember to call Ana', at: '2026-01-03T00:00:00.000Z' },
    ]);

    using to = tempProject();
    to.write('tack.json', { mcpServers: {} });
    const file = to.write('examples.jsonl', exported.stdout);
    const imported = await tack(['tools', 'examples', 'import', file], { cwd: to.dir, env: to.env });
    expect(imported.stdout.trim()).toBe('2 examples imported');
    const again = await tack(['tools', 'examples', 'export'], { cwd: to.dir, env: to.env });
    expect(again.stdout).toBe(exported.stdout);
    const target = TackStore.open(to.load().paths.storeFile);
    expect((await target.toolExamples.all()).get('weather')?.get('get_forecast')).toEqual([
      'will it rain in Oslo',
    ]);
    target.close();

    const broken = to.write('broken.jsonl', '{"server": "a", "tool": "b", "query": "c"}\n{"server": "a"}\n');
    const refused = await tack(['tools', 'examples', 'import', broken], { cwd: to.dir, env: to.env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${broken}:2: "tool" must be a non-empty string`);
  });
});
