import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { legacySession, postJsonRpc } from '../helpers/http.js';
import { type Service, startTackServe } from '../helpers/processes.js';
import { fixture, type TempProject, tempProject } from '../helpers/project.js';

/**
 * Random and deep JSON-RPC through a real `tack serve --http` (a real process, two real upstreams), in both
 * protocol eras and outside them. Property: every request gets an HTTP answer below 500 (a 500 is an unhandled
 * failure), a JSON answer is JSON-RPC, and an honest call works after every attack. Seeded, bounded in runs.
 */
const RUNS = { seed: 1316, numRuns: 150 };

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'fuzz', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

const method = fc.oneof(
  fc.constantFrom(
    'tools/call',
    'tools/list',
    'resources/list',
    'resources/read',
    'resources/templates/list',
    'prompts/list',
    'prompts/get',
    'completion/complete',
    'ping',
    'initialize',
    'server/discover',
    'subscriptions/listen',
    'logging/setLevel',
    'notifications/cancelled',
    'notifications/initialized',
  ),
  fc.string({ maxLength: 20 }),
);

const toolName = fc.constantFrom(
  'hostile__echo',
  'hostile__raw_result',
  'hostile__deep_result',
  'nope__x',
  '',
);

const params = fc.oneof(
  fc.record(
    {
      name: fc.oneof(toolName, fc.jsonValue({ maxDepth: 1 })),
      arguments: fc.oneof(
        fc.record({ text: fc.oneof(fc.string(), fc.jsonValue({ maxDepth: 3 })) }),
        fc.record({ depth: fc.integer({ min: -5, max: 30_000 }), shape: fc.constantFrom('structured', 'x') }),
        fc.record({ json: fc.oneof(fc.string(), fc.json({ depthSize: 'small' })) }),
        fc.jsonValue({ maxDepth: 3 }),
      ),
      uri: fc.oneof(
        fc.string(),
        fc.constantFrom('tack://hostile/x', 'tack://../../etc/passwd', 'file:///etc/passwd'),
      ),
      _meta: fc.oneof(fc.constant(MODERN_META), fc.jsonValue({ maxDepth: 2 })),
    },
    { requiredKeys: [] },
  ),
  fc.jsonValue({ maxDepth: 4 }),
);

const message = fc.record(
  {
    jsonrpc: fc.oneof(fc.constant('2.0'), fc.jsonValue({ maxDepth: 0 })),
    id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null), fc.jsonValue({ maxDepth: 1 })),
    method,
    params,
  },
  { requiredKeys: ['jsonrpc', 'method'] },
);

/** A body: a message, a batch, deep nesting, or text that is not JSON at all. */
const body = fc.oneof(
  { weight: 6, arbitrary: message.map((m) => JSON.stringify(m)) },
  { weight: 1, arbitrary: fc.array(message, { maxLength: 4 }).map((batch) => JSON.stringify(batch)) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(fc.integer({ min: 60, max: 50_000 }), fc.constantFrom('[', '{"a":'))
      .map(([depth, open]) => {
        const close = open === '[' ? ']' : '}';
        return `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hostile__echo","arguments":{"text":${open.repeat(depth)}1${close.repeat(depth)}}}}`;
      }),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 200 }) },
);

const era = fc.constantFrom('modern', 'legacy', 'none');

describe('gateway fuzz: random JSON-RPC through tack serve --http', () => {
  let project: TempProject;
  let service: Service & { url: string };
  let url: string;
  let session: Record<string, string>;

  beforeAll(async () => {
    project = tempProject();
    const config = project.write('tack.json', {
      mcpServers: {
        hostile: { command: process.execPath, args: [fixture('hostile-server.js')], callTimeoutMs: 10_000 },
      },
    });
    service = await startTackServe(BIN, config, project.env);
    url = service.url;
    session = await legacySession(url, 'fuzz');
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    project?.[Symbol.dispose]();
  });

  async function honestCall(): Promise<string> {
    const response = await postJsonRpc(
      url,
      {
        jsonrpc: '2.0',
        id: 'honest',
        method: 'tools/call',
        params: { name: 'hostile__echo', arguments: { text: 'still here' }, _meta: MODERN_META },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'hostile__echo' },
    );
    return response.text();
  }

  it('answers everything below 500 and keeps serving', async () => {
    await fc.assert(
      fc.asyncProperty(body, era, async (text, which) => {
        const headers: Record<string, string> = {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...(which === 'legacy' ? session : {}),
          ...(which === 'modern' ? { 'mcp-protocol-version': '2026-07-28' } : {}),
        };
        const response = await fetch(url, {
          method: 'POST',
          headers,
          body: text,
          signal: AbortSignal.timeout(20_000),
        });
        // A stream (SSE) answer is read to its end, so a hung exchange shows as a timeout here.
        const answer = await response.text();
        expect(
          response.status,
          `${response.status} for ${text.slice(0, 200)}: ${answer.slice(0, 300)}`,
        ).toBeLessThan(500);
        if (answer.startsWith('{')) expect(JSON.parse(answer)).toHaveProperty('jsonrpc', '2.0');
      }),
      RUNS,
    );
    expect(await honestCall()).toContain('still here');
    expect(service.process.exitCode).toBeNull();
  }, 180_000);
});
