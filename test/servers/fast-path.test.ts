import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import type { FastRequest } from '../../src/servers/serve.js';
import { legacySession, postJsonRpc } from '../helpers/http.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * The HTTP fast path (src/servers/serving/fast-path.ts) answers plain tools/call requests without the SDK. Its
 * answers must be the SDK's: two real gateways in front of the same real stdio server, one with the fast path
 * and one without, get the same raw requests, and their raw answers (status, headers, bodies, SSE frames) are
 * compared byte for byte once event ids and session ids are named alike.
 */

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Answer {
  status: number;
  contentType: string | null;
  cacheControl: string | null;
  session: boolean;
  body: string;
}

async function answer(response: Response): Promise<Answer> {
  const text = await response.text();
  const body = text
    .replace(/id: [0-9a-f-]{36}::\d+/g, 'id: <event>')
    .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '<uuid>');
  return {
    status: response.status,
    contentType: response.headers.get('content-type'),
    cacheControl: response.headers.get('cache-control'),
    session: response.headers.has('mcp-session-id'),
    body,
  };
}

type Call = { name: string; arguments: Record<string, unknown>; progressToken?: number; logLevel?: string };

const CALLS: Record<string, Call> = {
  'a plain result': { name: 'fx__echo', arguments: { text: 'hello' } },
  'structured content': { name: 'fx__env', arguments: {} },
  'progress (an SSE stream)': { name: 'fx__slow', arguments: { steps: 3, delayMs: 30 }, progressToken: 7 },
  'log messages (an SSE stream)': { name: 'fx__chatter', arguments: {}, logLevel: 'info' },
  'an isError result from a failing upstream call': { name: 'fx__slow', arguments: { steps: -1 } },
};

describe('the HTTP fast path', () => {
  let project: TempProject;
  const gateways: Record<'fast' | 'sdk', RunningGateway> = {} as never;
  const taken: FastRequest[] = [];

  beforeAll(async () => {
    project = tempProject();
    const config = project.config({ fx: fixtureEntry('stdio-server.js') });
    gateways.fast = await startGateway({ config, http: { port: 0 } });
    gateways.sdk = await startGateway({ config, http: { port: 0 }, fastPath: false });
    const fastPath = gateways.fast.gateway.fastPath;
    const take = fastPath.take.bind(fastPath);
    fastPath.take = (request) => {
      const took = take(request);
      if (took) taken.push(request);
      return took;
    };
  }, 60_000);

  afterAll(async () => {
    await Promise.all(Object.values(gateways).map((g) => g?.close()));
    project?.[Symbol.dispose]();
  });

  const modern = (url: string, call: Call, id: number) =>
    postJsonRpc(
      url,
      {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: call.name,
          arguments: call.arguments,
          _meta: {
            ...MODERN_META,
            ...(call.logLevel ? { 'io.modelcontextprotocol/logLevel': call.logLevel } : {}),
            ...(call.progressToken !== undefined ? { progressToken: call.progressToken } : {}),
          },
        },
      },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': call.name },
    );

  const legacy = (url: string, headers: Record<string, string>, call: Call, id: number) =>
    postJsonRpc(
      url,
      {
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: {
          name: call.name,
          arguments: call.arguments,
          ...(call.progressToken !== undefined ? { _meta: { progressToken: call.progressToken } } : {}),
        },
      },
      headers,
    );

  for (const [what, call] of Object.entries(CALLS)) {
    it(`answers a 2026-07-28 tools/call as the SDK does: ${what}`, async () => {
      const before = taken.length;
      const fast = await answer(await modern(gateways.fast.url!, call, 3));
      const sdk = await answer(await modern(gateways.sdk.url!, call, 3));
      expect(fast).toEqual(sdk);
      expect(taken.length).toBe(before + 1);
    });

    it(`answers a 2025-era session's tools/call as the SDK does: ${what}`, async () => {
      const before = taken.length;
      const fastSession = await legacySession(gateways.fast.url!);
      const sdkSession = await legacySession(gateways.sdk.url!);
      if (call.logLevel)
        for (const [url, headers] of [
          [gateways.fast.url!, fastSession],
          [gateways.sdk.url!, sdkSession],
        ] as const)
          await (
            await postJsonRpc(
              url,
              { jsonrpc: '2.0', id: 1, method: 'logging/setLevel', params: { level: call.logLevel } },
              headers,
            )
          ).text();
      const fast = await answer(await legacy(gateways.fast.url!, fastSession, call, 4));
      const sdk = await answer(await legacy(gateways.sdk.url!, sdkSession, call, 4));
      expect(fast).toEqual(sdk);
      expect(taken.length).toBe(before + 1);
    });
  }

  it('leaves to the SDK what is not a plain call of a served tool, and the answers are the same', async () => {
    const before = taken.length;
    const unknown = { name: 'fx__nope', arguments: {} };
    expect(await answer(await modern(gateways.fast.url!, unknown, 5))).toEqual(
      await answer(await modern(gateways.sdk.url!, unknown, 5)),
    );
    // A header that names another tool than the body: the SDK's -32020.
    const mismatched = (url: string) =>
      postJsonRpc(
        url,
        {
          jsonrpc: '2.0',
          id: 6,
          method: 'tools/call',
          params: { name: 'fx__echo', arguments: {}, _meta: MODERN_META },
        },
        { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx__env' },
      );
    const refused = await answer(await mismatched(gateways.fast.url!));
    expect(refused).toEqual(await answer(await mismatched(gateways.sdk.url!)));
    expect(refused.status).toBe(400);
    // Arguments that are not an object, and a request without an id: the SDK's answers.
    const odd = (url: string, message: unknown) =>
      postJsonRpc(url, message, {
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': 'fx__echo',
      });
    for (const message of [
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'fx__echo', arguments: [1], _meta: MODERN_META },
      },
      {
        jsonrpc: '2.0',
        method: 'tools/call',
        params: { name: 'fx__echo', arguments: {}, _meta: MODERN_META },
      },
    ])
      expect(await answer(await odd(gateways.fast.url!, message))).toEqual(
        await answer(await odd(gateways.sdk.url!, message)),
      );
    expect(taken.length).toBe(before);
  });

  it('cancels a 2025-era call it serves when the client sends notifications/cancelled, and audits it', async () => {
    const url = gateways.fast.url!;
    const headers = await legacySession(url, 'canceller');
    const before = taken.length;
    const pending = legacy(url, headers, { name: 'fx__slow', arguments: { steps: 1, delayMs: 4321 } }, 9);
    await expect.poll(() => taken.length).toBe(before + 1);
    const cancel = await postJsonRpc(
      url,
      {
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: 9, reason: 'changed my mind' },
      },
      headers,
    );
    expect(cancel.status).toBe(202);
    // As with the SDK, a cancelled request gets no response: its stream ends without one.
    const stream = await (await pending).text();
    expect(stream).not.toContain('"id":9');
    await expect
      .poll(
        async () =>
          (await gateways.fast.host.store?.audit.recent(5))?.find((e) => e.client.startsWith('canceller'))
            ?.outcome,
      )
      .toBe('cancelled');
  });
});
