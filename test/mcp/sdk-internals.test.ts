import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, InMemoryTransport, type JSONRPCMessage } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { McpServer } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it } from 'vitest';
import { LinearReadBuffer } from '../../src/mcp/read-buffer.js';
import {
  interceptOnMessage,
  replaceStdioReadBuffer,
  SDK_VERSIONS,
  SERVED_REQUEST_KEYS,
  stdioChildProcess,
} from '../../src/mcp/sdk-internals.js';
import { REPO } from '../helpers/project.js';

/**
 * The contract of src/mcp/sdk-internals.ts with the installed SDK: the versions it was written for, and every
 * private part it relies on, in the shape it expects. A failure here after an SDK upgrade means: re-read the
 * SDK's stdio transport, Protocol.connect and ServerContext, adjust sdk-internals.ts, then SDK_VERSIONS.
 */

const cleanups: Array<() => Promise<unknown>> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup().catch(() => {});
});

function installedVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(join(REPO, 'node_modules', name, 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** A child that writes one JSON-RPC notification on stdout and then waits for stdin to close. */
function notifyingChild(): StdioClientTransport {
  const line = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info' } });
  return new StdioClientTransport({
    command: process.execPath,
    args: ['-e', `process.stdout.write(${JSON.stringify(`${line}\n`)}); process.stdin.resume();`],
    stderr: 'pipe',
  });
}

/** A client talking to `server` over a linked in-memory pair, both closed after the test. */
async function connected(
  server: McpServer,
  serverSide: InMemoryTransport,
  clientSide: InMemoryTransport,
): Promise<Client> {
  await server.connect(serverSide);
  const client = new Client({ name: 'contract-client', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(
    () => client.close(),
    () => server.close(),
  );
  return client;
}

describe('SDK internals tack relies on', () => {
  it('are those of the SDK versions the patches were written for (an upgrade must re-check them)', () => {
    for (const [name, version] of Object.entries(SDK_VERSIONS))
      expect(installedVersion(name), name).toBe(version);
  });

  it('stdio: _readBuffer has append, readMessage and clear, and the SDK reads every chunk through it', async () => {
    const transport = notifyingChild();
    const sdkBuffer = (transport as unknown as { _readBuffer: Record<string, unknown> })._readBuffer;
    for (const method of ['append', 'readMessage', 'clear'])
      expect(typeof sdkBuffer[method], `_readBuffer.${method}`).toBe('function');
    const ours = new LinearReadBuffer(1024);
    let appended = 0;
    const append = ours.append.bind(ours);
    ours.append = (chunk) => {
      appended += chunk.length;
      append(chunk);
    };
    expect(replaceStdioReadBuffer(transport, ours)).toBe(true);
    const received = new Promise<JSONRPCMessage>((resolve) => {
      transport.onmessage = resolve;
    });
    await transport.start();
    cleanups.push(() => transport.close());
    expect(await received).toMatchObject({ method: 'notifications/message' });
    expect(appended).toBeGreaterThan(0);
  });

  it('stdio: a buffer of another shape is left alone', () => {
    const transport = notifyingChild();
    (transport as unknown as { _readBuffer: unknown })._readBuffer = {};
    expect(replaceStdioReadBuffer(transport, new LinearReadBuffer(1024))).toBe(false);
  });

  it('stdio: _process is the spawned child once started, and absent before', async () => {
    const transport = notifyingChild();
    expect(stdioChildProcess(transport)).toBeUndefined();
    await transport.start();
    cleanups.push(() => transport.close());
    const child = stdioChildProcess(transport);
    expect(child?.pid).toBeGreaterThan(0);
    const exited = new Promise<number | null>((resolve) => child?.once('exit', (code) => resolve(code)));
    await transport.close();
    expect(await exited).not.toBeUndefined();
  });

  it('the SDK installs its message handler by assigning onmessage, so an accessor sees every message', async () => {
    const server = new McpServer({ name: 'contract', version: '1.0.0' });
    server.registerTool('noop', { description: 'does nothing' }, async () => ({ content: [] }));
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const seen: string[] = [];
    interceptOnMessage(clientSide, (message, extra, handler) => {
      seen.push('method' in message ? message.method : 'answer');
      handler()?.(message, extra);
    });
    const client = await connected(server, serverSide, clientSide);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toEqual(['noop']);
    expect(seen.filter((s) => s === 'answer').length).toBeGreaterThanOrEqual(2);
  });

  it("ServerContext.mcpReq has every part the gateway's fast path builds without an SDK instance", async () => {
    const server = new McpServer({ name: 'contract', version: '1.0.0' });
    const kinds = new Map<string, string>();
    server.registerTool('look', { description: 'records its context' }, async (ctx) => {
      for (const key of SERVED_REQUEST_KEYS) if (key in ctx.mcpReq) kinds.set(key, typeof ctx.mcpReq[key]);
      return { content: [] };
    });
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    const client = await connected(server, serverSide, clientSide);
    await client.callTool({ name: 'look', arguments: {} });
    // envelope and inputResponses exist on a 2026-07-28 request only; the in-memory pair speaks the 2025 era.
    expect(Object.fromEntries(kinds)).toMatchObject({
      signal: 'object',
      _meta: expect.any(String),
      requestState: 'function',
      notify: 'function',
      elicitInput: 'function',
      requestSampling: 'function',
      send: 'function',
    });
  });
});
