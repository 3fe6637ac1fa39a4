import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startAgent } from '../../src/agent/agent.js';
import type { TackWarning } from '../../src/util/warnings.js';
import { startEmbeddingsServer } from '../helpers/embeddings-server.js';
import { providerEnv, toolResults } from '../helpers/fake-provider.js';
import { REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const EXAMPLES = join(REPO, 'dist', 'examples', 'servers');
const scope = testScope();

/** The notes (2026-07-28) and weather (2025) examples as real server processes, tool search on. */
function project(embeddings?: { baseURL: string }): TempProject {
  const p = scope.project('tack-search-harness-');
  p.write('tack.json', {
    agent: { toolSearch: 'on' },
    ...(embeddings
      ? { toolSearch: { embeddings: { model: 'openai-compatible:toy-embed', baseURL: embeddings.baseURL } } }
      : {}),
    mcpServers: {
      notes: { command: process.execPath, args: [join(EXAMPLES, 'notes.js')] },
      weather: { command: process.execPath, args: [join(EXAMPLES, 'weather-legacy.js')], trusted: true },
    },
  });
  return p;
}

describe('search_tools through the harness, against a local server speaking the providers’ wire formats', () => {
  for (const api of ['anthropic', 'openai'] as const) {
    it(`takes several capability queries, merges them grouped by server, and loads what it found (${api})`, async () => {
      const p = project();
      const provider = await scope.fake([
        {
          toolCalls: [
            { name: 'search_tools', input: { queries: ['weather forecast for a city', 'add a note'], k: 4 } },
          ],
        },
        { toolCalls: [{ name: 'mcp__weather__get_forecast', input: { city: 'Tokyo' } }] },
        { text: 'Done.' },
      ]);
      const agent = await startAgent({
        config: p.load(),
        model: api === 'anthropic' ? 'anthropic:claude-sonnet-4-5' : 'openai:gpt-4.1',
        env: { ...p.env, ...providerEnv(provider) },
        cwd: p.dir,
        transcript: false,
        approver: async () => ({ decision: 'allow' }),
      });
      scope.defer(() => agent.close());
      const result = await agent.session.run('Will it rain in Tokyo? Note the answer.');
      expect(result.reason).toBe('completed');

      const idle = provider.requests[0]!;
      expect(idle.tools.filter((t) => t.name.startsWith('mcp__'))).toEqual([]);
      const search = idle.tools.find((t) => t.name === 'search_tools')!;
      expect(Object.keys((search.parameters as { properties: object }).properties)).toEqual([
        'queries',
        'query',
        'k',
      ]);
      expect(search.description).toMatch(/one short query per capability/);
      // The deferred-loading notice names the servers and gives the same advice.
      expect(idle.system).toMatch(
        /<deferred_tools>The tools of these servers are not loaded: notes, weather\./,
      );
      expect(idle.system).toContain('one short query per capability');

      const found = toolResults(provider.requests[1]!).at(-1)!.content;
      const lines = found.split('\n').filter((l) => /^\d+\. /.test(l));
      // Both needs near the top, and the lines of one server together.
      expect(lines.slice(0, 3).join('\n')).toMatch(/mcp__weather__get_forecast/);
      expect(lines.join('\n')).toMatch(/mcp__notes__add_note/);
      const servers = lines.map((l) => /\(server (\w+)\)/.exec(l)![1]);
      expect(servers).toEqual([...servers].sort((a, b) => servers.indexOf(a!) - servers.indexOf(b!)));
      // Found tools are loaded from the next step on.
      const next = provider.requests[1]!.tools.map((t) => t.name);
      expect(next).toEqual(expect.arrayContaining(['mcp__weather__get_forecast', 'mcp__notes__add_note']));
      expect(toolResults(provider.requests[2]!).at(-1)!.content).toContain('Tokyo');
    });
  }

  it('fuses the semantic ranking from toolSearch.embeddings, and searches lexically when the endpoint is down', async () => {
    const endpoint = await startEmbeddingsServer({ concepts: { umbrella: 'weather', forecast: 'weather' } });
    scope.defer(() => endpoint.close());
    const p = project({ baseURL: endpoint.url });
    const provider = await scope.fake([
      { toolCalls: [{ name: 'search_tools', input: { query: 'umbrella', k: 1 } }] },
      { toolCalls: [{ name: 'search_tools', input: { query: 'weather forecast', k: 1 } }] },
      { text: 'ok' },
    ]);
    const heard: TackWarning[] = [];
    const agent = await startAgent({
      config: p.load(),
      model: 'openai:gpt-4.1',
      env: { ...p.env, ...providerEnv(provider) },
      cwd: p.dir,
      transcript: false,
      onWarning: (w) => heard.push(w),
      approver: async () => ({ decision: 'allow' }),
    });
    scope.defer(() => agent.close());
    // "umbrella" is in no definition: only the semantic ranking finds the forecast. Then the endpoint fails.
    const result = await agent.session.run('Do I need an umbrella?');
    expect(result.reason).toBe('completed');
    expect(toolResults(provider.requests[1]!).at(-1)!.content).toMatch(/\n1\. mcp__weather__get_forecast/);
    expect(endpoint.texts.length).toBeGreaterThan(1);
    expect(heard).toEqual([]);

    endpoint.setFailing(true);
    const again = await scope.fake([
      { toolCalls: [{ name: 'search_tools', input: { query: 'weather forecast', k: 1 } }] },
      { text: 'ok' },
    ]);
    const second = await startAgent({
      config: p.load(),
      model: 'openai:gpt-4.1',
      env: { ...p.env, ...providerEnv(again) },
      cwd: p.dir,
      transcript: false,
      onWarning: (w) => heard.push(w),
      approver: async () => ({ decision: 'allow' }),
    });
    scope.defer(() => second.close());
    expect((await second.session.run('forecast?')).reason).toBe('completed');
    expect(toolResults(again.requests[1]!).at(-1)!.content).toMatch(/\n1\. mcp__weather__get_forecast/);
    expect(heard.map((w) => w.code)).toEqual(['SEMANTIC_SEARCH_UNAVAILABLE']);
    expect(heard[0]!.message).toMatch(/toy-embed cannot be reached .*searching lexically/);
  });
});
