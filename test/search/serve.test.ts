import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { tack } from '../helpers/cli.js';
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
      arguments: { query: 'forecast for a city', k: 2 },
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

  it('tack bench tool-search runs a retrieval set offline: both rankers side by side, and the context table', async () => {
    using project = tempProject();
    project.write(
      'tools.json',
      JSON.stringify([
        { server: 'wx', name: 'get_forecast', description: 'Weather forecast for a city.' },
        { server: 'wx', name: 'list_cities', description: 'Cities with forecasts.' },
        {
          server: 'fs',
          name: 'read_file',
          description: 'Read a file from disk.',
          inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
        },
        { server: 'fs', name: 'write_file', description: 'Write a file to disk.' },
      ]),
    );
    project.write(
      'queries.jsonl',
      '{"query": "will it rain in Oslo tomorrow", "gold": ["wx/get_forecast"]}\n{"query": "open the config file", "gold": ["read_file"]}\n',
    );
    const run = await tack(
      ['bench', 'tool-search', '--tools', 'tools.json', '--queries', 'queries.jsonl', '--k', '1,2', '--json'],
      {
        cwd: project.dir,
        env: project.env,
      },
    );
    expect(run.stderr).toBe('');
    const report = JSON.parse(run.stdout) as {
      retrieval: { tack: { hitAt: Record<string, number> }; baseline: { hitAt: Record<string, number> } };
      context: { inlineTokens: number; deferredIdleTokens: number };
    };
    expect(Object.keys(report.retrieval.tack.hitAt)).toEqual(['1', '2']);
    expect(report.retrieval.baseline.hitAt['2']).toBeGreaterThanOrEqual(0);
    expect(report.context.inlineTokens).toBeGreaterThan(0);
    const table = await tack(
      ['bench', 'tool-search', '--tools', 'tools.json', '--queries', 'queries.jsonl'],
      {
        cwd: project.dir,
        env: project.env,
      },
    );
    expect(table.stdout).toMatch(/^tack +[\d.]+/m);
    expect(table.stdout).toMatch(/^bm25 \(name\+description\) +[\d.]+/m);
    expect(table.stdout).toContain('deferred, idle (search_tools + call_tool)');
    const bad = await tack(
      ['bench', 'tool-search', '--tools', 'queries.jsonl', '--queries', 'queries.jsonl'],
      {
        cwd: project.dir,
        env: project.env,
      },
    );
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('queries.jsonl');
  });

  it('tack tools search ranks the catalog with scores', async () => {
    const run = await tack(
      ['tools', 'search', 'weather forecast', '--config', 'examples/tack.json', '--json'],
      {
        cwd: REPO,
      },
    );
    expect(run.code).toBe(0);
    const rows = JSON.parse(run.stdout) as Array<{ name: string; score: number }>;
    expect(rows[0]!.name).toBe('mcp__weather__get_forecast');
    expect(rows[0]!.score).toBeGreaterThan(rows[1]!.score);
  });
});
