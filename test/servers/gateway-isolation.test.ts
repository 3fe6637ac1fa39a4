import { spawn } from 'node:child_process';
import { request } from 'node:http';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { BIN } from '../helpers/cli.js';
import { EVERYTHING, fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * Issue 28: what one client of a shared `tack serve` gives an upstream (its roots, its capabilities, its progress
 * tokens) never reaches another client, and what belongs to a request reaches that request's client before its
 * result. Real upstreams: server-everything from npm (caches roots per session) and our coalescing fixture.
 */

type Era = 'modern' | 'legacy';

interface Party {
  client: Client;
  era: Era;
  roots: string[] | undefined;
}

async function party(
  transport: StreamableHTTPClientTransport,
  era: Era,
  name: string,
  roots: string[] | undefined,
  capabilities: Record<string, unknown> = {},
): Promise<Party> {
  const client = new Client(
    { name, version: '1.0.0' },
    {
      ...(era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
      capabilities: { ...(roots ? { roots: { listChanged: true } } : {}), ...capabilities },
    },
  );
  if (roots)
    client.setRequestHandler('roots/list', async () => ({
      roots: roots.map((uri) => ({ uri, name: uri.split('/').pop() ?? uri })),
    }));
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe(era);
  return { client, era, roots };
}

function text(result: { content?: unknown }): string {
  const blocks = (result.content ?? []) as Array<{ type: string; text?: string }>;
  return blocks.map((b) => b.text ?? `[${b.type}]`).join('\n');
}

const ROOTS = {
  a: 'file:///tmp/client-a',
  b: 'file:///home/b/secret-project',
  d: 'file:///srv/client-d',
};
const ALL_ROOTS = Object.values(ROOTS);

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** The roots server-everything says it knows, as the party sees them. */
async function rootsSeen(p: Party): Promise<string[]> {
  const result = await p.client.callTool({ name: 'everything__get-roots-list', arguments: {} });
  const said = text(result);
  return ALL_ROOTS.filter((uri) => said.includes(uri));
}

/** `tack serve` over stdio as a raw wire: JSON lines in and out. */
function stdioWire(project: TempProject) {
  const child = spawn(process.execPath, [BIN, 'serve', '--config', `${project.dir}/tack.json`], {
    env: { ...process.env, TACK_HOME: project.home },
    stdio: ['pipe', 'pipe', 'ignore'],
  });
  const lines: Array<Record<string, unknown>> = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      lines.push(JSON.parse(buffer.slice(0, nl)) as Record<string, unknown>);
      buffer = buffer.slice(nl + 1);
    }
  });
  const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`);
  const answered = (id: number) =>
    expect.poll(() => lines.findIndex((l) => l.id === id), { timeout: 15_000 });
  return { lines, send, answered, child };
}

describe('tack serve: clients of one gateway stay apart', () => {
  let project: TempProject;
  let gateway: RunningGateway;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', {
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        coalescing: fixtureEntry('legacy-stdio-server.js', ['--coalesce']),
        keeper: fixtureEntry('roots-server.js', ['--deaf']),
        follower: fixtureEntry('roots-server.js'),
      },
    });
    gateway = await startGateway({ config: project.load(), http: { port: 0 }, rootsTurnWaitMs: 1_000 });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    project?.[Symbol.dispose]();
  });

  const overHttp = (era: Era, name: string, roots?: string[], capabilities?: Record<string, unknown>) =>
    party(new StreamableHTTPClientTransport(new URL(gateway.url!)), era, name, roots, capabilities);

  it('gives an upstream that caches roots the roots of the client whose call it serves, never another', async () => {
    const a = await overHttp('legacy', 'client-a', [ROOTS.a]);
    const b = await overHttp('legacy', 'client-b', [ROOTS.b]);
    const c = await overHttp('legacy', 'client-c', undefined);
    const d = await overHttp('modern', 'client-d', [ROOTS.d]);
    try {
      // server-everything asks for roots 350 ms after it starts, or during the first get-roots-list call. Asked
      // during a call before the gateway has tried whether it follows roots/list_changed, it gets the gateway's
      // (none): so on a loaded machine a's first answer may be empty, but never another client's roots.
      let first = await rootsSeen(a);
      for (let tries = 0; first.length === 0 && tries < 50; tries++) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        first = await rootsSeen(a);
      }
      expect(first).toEqual([ROOTS.a]);
      expect(await rootsSeen(b)).toEqual([ROOTS.b]);
      // A client without roots gets the gateway's own (none), not the last client's.
      expect(await rootsSeen(c)).toEqual([]);
      expect(await rootsSeen(d)).toEqual([ROOTS.d]);
      expect(await rootsSeen(a)).toEqual([ROOTS.a]);
      // Interleaved: every answer is the caller's own roots, whatever the other calls in flight.
      const parties = [a, b, d, a, b, c, d, b];
      const seen = await Promise.all(parties.map((p) => rootsSeen(p)));
      expect(seen).toEqual(parties.map((p) => p.roots ?? []));
    } finally {
      await Promise.all([a, b, c, d].map((p) => p.client.close()));
    }
  }, 60_000);

  it("bounds how long one client's call holds an upstream that asks for roots", async () => {
    const a = await overHttp('legacy', 'client-a', [ROOTS.a]);
    const b = await overHttp('legacy', 'client-b', [ROOTS.b]);
    try {
      expect(await rootsSeen(a)).toEqual([ROOTS.a]); // the upstream has asked for roots: turns from here on
      const long = a.client.callTool({
        name: 'everything__trigger-long-running-operation',
        arguments: { duration: 3, steps: 3 },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const waited = await b.client.callTool({ name: 'everything__get-roots-list', arguments: {} });
      expect(waited.isError).toBe(true);
      expect(text(waited)).toContain(
        '"everything" asks clients for their roots, so it serves one client at a time, and another client\'s call has held it for over 1 s',
      );
      expect(text(await long)).toContain('Long running operation completed');
      expect(await rootsSeen(b)).toEqual([ROOTS.b]);
    } finally {
      await Promise.all([a, b].map((p) => p.client.close()));
    }
  }, 30_000);

  it("never gives a client's roots to an upstream that keeps the first answer and ignores roots/list_changed", async () => {
    const a = await overHttp('legacy', 'client-a', [ROOTS.a]);
    const b = await overHttp('legacy', 'client-b', [ROOTS.b]);
    const said = async (p: Party, tool: string) =>
      text(await p.client.callTool({ name: tool, arguments: {} }));
    try {
      // Not tried yet, then found not to ask again when told: it gets the gateway's roots, whoever calls.
      expect(await said(a, 'keeper__kept')).toBe('[]');
      expect(await said(b, 'keeper__kept')).toBe('[]');
      expect(await said(a, 'keeper__ask')).toBe('[]');
      expect(await said(b, 'keeper__ask')).toBe('[]');
      // One that follows gets the caller's (its first answer, before it was tried, is the gateway's).
      expect(await said(a, 'follower__kept')).toBe('[]');
      expect(await said(b, 'follower__kept')).toBe(JSON.stringify([ROOTS.b]));
      expect(await said(a, 'follower__kept')).toBe(JSON.stringify([ROOTS.a]));
      expect(await said(a, 'follower__ask')).toBe(JSON.stringify([ROOTS.a]));
      expect(await said(b, 'follower__ask')).toBe(JSON.stringify([ROOTS.b]));
    } finally {
      await Promise.all([a, b].map((p) => p.client.close()));
    }
  }, 30_000);

  it("drops a roots answer that comes after its client's turn is over", async () => {
    let hold: Promise<void> | undefined;
    let release = () => {};
    const a = await overHttp('legacy', 'client-a', [ROOTS.a]);
    a.client.setRequestHandler('roots/list', async () => {
      await hold;
      return { roots: [{ uri: ROOTS.a }] };
    });
    const b = await overHttp('legacy', 'client-b', [ROOTS.b]);
    b.client.setRequestHandler('roots/list', async () => {
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      return { roots: [{ uri: ROOTS.b }] };
    });
    try {
      expect(await rootsSeen(a)).toEqual([ROOTS.a]);
      const long = a.client.callTool({
        name: 'everything__trigger-long-running-operation',
        arguments: { duration: 1, steps: 1 },
      });
      await new Promise((resolve) => setTimeout(resolve, 200));
      // A says its roots changed; the upstream asks A again, and A sits on the answer past its turn.
      hold = new Promise((resolve) => {
        release = () => resolve();
      });
      await a.client.sendRootsListChanged();
      await new Promise((resolve) => setTimeout(resolve, 100));
      const seenByB = rootsSeen(b);
      await long;
      await new Promise((resolve) => setTimeout(resolve, 300));
      release();
      expect(await seenByB).toEqual([ROOTS.b]);
    } finally {
      release();
      await Promise.all([a, b].map((p) => p.client.close()));
    }
  }, 30_000);

  it('gives the next client its turn when one never answers roots/list', async () => {
    const a = await overHttp('legacy', 'client-a', [ROOTS.a]);
    a.client.setRequestHandler('roots/list', () => new Promise(() => {}));
    const b = await overHttp('legacy', 'client-b', [ROOTS.b]);
    try {
      const seenByA = rootsSeen(a);
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Meanwhile B waits its turn (1 s in this gateway) and is told why.
      const waited = await b.client.callTool({ name: 'everything__get-roots-list', arguments: {} });
      expect(text(waited)).toContain('serves one client at a time');
      // A's answer never comes: after 10 s the upstream gets none, A's call goes on, and its turn ends.
      expect(await seenByA).toEqual([]);
      expect(await rootsSeen(b)).toEqual([ROOTS.b]);
    } finally {
      await Promise.all([a, b].map((p) => p.client.close()));
    }
  }, 40_000);

  it("tells the upstream a client's roots changed while that client's call runs", async () => {
    const roots = [ROOTS.a];
    const a = await overHttp('legacy', 'client-a', roots);
    try {
      expect(await rootsSeen(a)).toEqual([ROOTS.a]);
      roots.splice(0, 1, ROOTS.d);
      await a.client.sendRootsListChanged();
      await expect.poll(() => rootsSeen(a), { timeout: 5_000 }).toEqual([ROOTS.d]);
    } finally {
      await a.client.close();
    }
  }, 30_000);

  it('answers a call whose upstream asks for a capability the client lacks with an error naming it', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const c = await overHttp(era, `no-sampling-${era}`, undefined);
      try {
        const result = await c.client.callTool({
          name: 'everything__trigger-sampling-request',
          arguments: { prompt: 'hi', maxTokens: 10 },
        });
        expect(result.isError).toBe(true);
        expect(text(result)).toBe(
          'The tool everything__trigger-sampling-request (server "everything") asked the client for sampling/createMessage, and this client did not declare the "sampling" capability: call it from a client that supports sampling.',
        );
      } finally {
        await c.client.close();
      }
    }
  }, 30_000);

  for (const era of ['legacy', 'modern'] as const) {
    it(`delivers every progress notification of a ${era} call before its result (HTTP)`, async () => {
      const p = await overHttp(era, `progress-${era}`);
      try {
        for (let round = 0; round < 5; round++) {
          const seen: number[] = [];
          const result = await p.client.callTool(
            { name: 'coalescing__slow', arguments: { steps: 3, delayMs: 5 } },
            { onprogress: (progress) => seen.push(progress.progress) },
          );
          expect(text(result)).toBe('done after 3 steps');
          expect(seen).toEqual([1, 2, 3]);
        }
      } finally {
        await p.client.close();
      }
    }, 30_000);
  }

  for (const era of ['legacy', 'modern'] as const) {
    it(`writes every progress notification of a ${era} call before its result (stdio, on the wire)`, async () => {
      // The wire itself is read: an SDK client reading both lines in one chunk would lose the notification on
      // its own side (the race this test guards against in tack's upstream connection).
      const { lines, send, answered, child } = stdioWire(project);
      try {
        const meta = era === 'modern' ? MODERN_META : {};
        if (era === 'legacy') {
          send({
            jsonrpc: '2.0',
            id: 0,
            method: 'initialize',
            params: {
              protocolVersion: '2025-06-18',
              capabilities: {},
              clientInfo: { name: 'raw', version: '1' },
            },
          });
          await answered(0).toBeGreaterThanOrEqual(0);
          send({ jsonrpc: '2.0', method: 'notifications/initialized' });
        }
        for (let id = 1; id <= 5; id++) {
          const from = lines.length;
          send({
            jsonrpc: '2.0',
            id,
            method: 'tools/call',
            params: {
              name: 'coalescing__slow',
              arguments: { steps: 3, delayMs: 5 },
              _meta: { ...meta, progressToken: `t${id}` },
            },
          });
          await answered(id).toBeGreaterThanOrEqual(0);
          const upTo = lines.findIndex((l) => l.id === id);
          const progress = lines
            .slice(from, upTo)
            .filter((l) => l.method === 'notifications/progress')
            .map((l) => (l.params as { progressToken: string; progress: number }).progress);
          expect(progress).toEqual([1, 2, 3]);
        }
      } finally {
        child.kill();
      }
    }, 30_000);
  }

  it('refuses JSON nested past limits.jsonDepth over stdio with the documented error, and goes on serving', async () => {
    const { lines, send, answered, child } = stdioWire(project);
    try {
      // Written as text: JSON.stringify itself overflows at this depth.
      const deep = `${'['.repeat(5_000)}"bottom"${']'.repeat(5_000)}`;
      const request = JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: { name: 'coalescing__echo', arguments: { text: 'DEEP' }, _meta: MODERN_META },
      }).replace('"DEEP"', deep);
      child.stdin.write(`${request}\n`);
      await answered(1).toBeGreaterThanOrEqual(0);
      expect(lines.find((l) => l.id === 1)?.error).toEqual({
        code: -32600,
        message: 'Invalid Request: JSON nested deeper than 64 levels (limits.jsonDepth)',
      });
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'coalescing__echo', arguments: { text: 'still here' }, _meta: MODERN_META },
      });
      await answered(2).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(lines.find((l) => l.id === 2)?.result)).toContain('still here');
    } finally {
      child.kill();
    }
  }, 30_000);
});

describe('tack serve: 2025-era sessions when they run short', () => {
  let project: TempProject;
  let gateway: RunningGateway;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('legacy-stdio-server.js') } });
    gateway = await startGateway({
      config: project.load(),
      http: { host: '127.0.0.1', port: 0, legacySessions: { maxSessions: 8 } },
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    project?.[Symbol.dispose]();
  });

  /** One JSON-RPC POST from `localAddress` (127.0.0.2 is another machine as far as tack can tell). */
  function post(localAddress: string, body: unknown, session?: string) {
    const url = new URL(gateway.url!);
    return new Promise<{ status: number; session: string | undefined }>((resolve, reject) => {
      const req = request(
        {
          host: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          localAddress,
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...(session ? { 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' } : {}),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () =>
            resolve({
              status: res.statusCode ?? 0,
              session: res.headers['mcp-session-id'] as string | undefined,
            }),
          );
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  }
  const initialize = async (from: string) => {
    const { session } = await post(from, {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: from, version: '1' } },
    });
    expect(session).toBeDefined();
    return session!;
  };
  const ping = async (from: string, session: string) =>
    (await post(from, { jsonrpc: '2.0', id: 2, method: 'ping' }, session)).status;

  it("evicts the opener's own sessions first: one client opening sessions in a loop never closes another's", async () => {
    const victim = await initialize('127.0.0.2');
    expect(await ping('127.0.0.2', victim)).toBe(200);
    const flood: string[] = [];
    for (let i = 0; i < 20; i++) flood.push(await initialize('127.0.0.1'));
    expect(await ping('127.0.0.2', victim)).toBe(200);
    // The flood churned its own: its newest session lives, its oldest is gone.
    expect(await ping('127.0.0.1', flood.at(-1)!)).toBe(200);
    expect(await ping('127.0.0.1', flood[0]!)).toBe(404);
  }, 30_000);
});
