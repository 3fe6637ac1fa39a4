import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import { renderBlock, resultText } from '../../src/mcp/content.js';
import type { McpHost } from '../../src/mcp/host.js';
import { fixture, startHost, type TempProject, tempProject } from '../helpers/project.js';

/**
 * A real server (test/fixtures/servers/hostile-server.ts) answers tools/call with whatever result text the
 * property generates: any JSON value, result-shaped objects with wrong types, hostile strings, deep nesting.
 * Property: tack gives back a result it can render, or a TackError; the connection is never lost and the next
 * honest call works. Seeded, bounded in runs.
 */
const RUNS = { seed: 1315, numRuns: 150 };

const hostileString = fc.oneof(
  fc.string({ maxLength: 50 }),
  fc.string({ unit: 'binary', maxLength: 50 }),
  fc.constantFrom('\u0000', '\u202e', '\udbff', '\u{e0041}\u{e0042}', '\r\n\u001b[31m', '{"jsonrpc":"2.0"}'),
  fc.integer({ min: 1, max: 20_000 }).map((n) => 'x'.repeat(n)),
);

const block = fc.oneof(
  fc.record({ type: fc.constant('text'), text: hostileString }),
  fc.record({ type: fc.constant('image'), data: hostileString, mimeType: hostileString }),
  fc.record({
    type: fc.constant('resource'),
    resource: fc.record({ uri: hostileString, text: hostileString }),
  }),
  fc.record({
    type: fc.constantFrom('resource_link', 'audio', 'unknown', ''),
    uri: hostileString,
    name: hostileString,
  }),
  fc.jsonValue({ maxDepth: 4 }),
);

const result = fc.oneof(
  fc.record(
    {
      resultType: fc.constantFrom('complete', 'input_required', 'other'),
      content: fc.oneof(fc.array(block, { maxLength: 4 }), fc.jsonValue({ maxDepth: 2 })),
      structuredContent: fc.oneof(fc.jsonValue({ maxDepth: 6 }), fc.dictionary(fc.string(), fc.jsonValue())),
      isError: fc.oneof(fc.boolean(), fc.jsonValue({ maxDepth: 1 })),
      _meta: fc.jsonValue({ maxDepth: 3 }),
    },
    { requiredKeys: ['resultType'] },
  ),
  fc.jsonValue({ maxDepth: 5 }),
  fc
    .integer({ min: 60, max: 5_000 })
    .map(
      (n) => `{"resultType":"complete","content":[],"structuredContent":${'['.repeat(n)}${']'.repeat(n)}}`,
    ),
);

describe('server results fuzz', () => {
  let project: TempProject;
  let host: McpHost;

  beforeAll(async () => {
    project = tempProject();
    host = await startHost(project, {
      hostile: { command: process.execPath, args: [fixture('hostile-server.js')], callTimeoutMs: 10_000 },
    });
  });

  afterAll(async () => {
    await host?.close();
    project?.[Symbol.dispose]();
  });

  it('a renderable result or a TackError, and the connection stays', async () => {
    await fc.assert(
      fc.asyncProperty(result, async (generated) => {
        // A generated string goes as it is: text that is not JSON at all, as a broken server would send.
        const json = typeof generated === 'string' ? generated : JSON.stringify(generated);
        try {
          const answer = await host.callTool('mcp__hostile__raw_result', { json });
          for (const item of Array.isArray(answer.content) ? answer.content : [])
            expect(typeof renderBlock(item)).toBe('string');
          expect(typeof resultText(answer)).toBe('string');
        } catch (error) {
          expect(TackError.isInstance(error), String(error)).toBe(true);
        }
        expect(host.servers()[0]).toMatchObject({ status: 'connected', restarts: 0 });
      }),
      RUNS,
    );
    expect((await host.callTool('mcp__hostile__echo', { text: 'still here' })).content).toEqual([
      { type: 'text', text: 'still here' },
    ]);
  }, 120_000);
});
