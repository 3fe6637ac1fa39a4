import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * Hostile POSTs at /mcp, past the token, through the fast path's and the SDK's routing: odd JSON shapes, header
 * values that name one thing and carry another, Base64 forms that do not decode. Every one is answered with an
 * HTTP status, none ends the process, and a real call works afterwards.
 */
describe('hostile: malformed MCP requests at the gateway', () => {
  let project: TempProject;
  let gateway: RunningGateway;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', { mcpServers: { fx: fixtureEntry('stdio-server.js') } });
    gateway = await startGateway({ config: project.load(), http: { port: 0 } });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close().catch(() => {});
    project?.[Symbol.dispose]();
  });

  it('answers each one and keeps serving', async () => {
    const call = (params: unknown, id: unknown = 1) =>
      JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params });
    const bodies = [
      'null',
      '[]',
      '[null]',
      '"x"',
      '1e999',
      '{}',
      call(null),
      call({ name: null }),
      call({ name: 'fx__echo', arguments: [] }),
      call({ name: 'fx__echo', arguments: 'x' }),
      call({ name: { toString: 1 } }),
      call({ name: 'fx__echo', arguments: { text: 'x' }, _meta: null }),
      call({
        name: 'fx__echo',
        arguments: { text: 'x' },
        _meta: { 'io.modelcontextprotocol/clientInfo': 5 },
      }),
      call({ name: 'fx__echo', arguments: { text: 'x' } }, null),
      call({ name: 'fx__echo', arguments: { text: 'x' } }, { id: 1 }),
      call({ name: '__proto__', arguments: {} }),
      call({ name: 'constructor', arguments: {} }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: null }),
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: { a: 1 } } }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: null }),
      JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: 7 }),
      JSON.stringify([{ jsonrpc: '2.0', id: 1, method: 'tools/list' }, null]),
    ];
    const headerSets: Array<Record<string, string>> = [
      {},
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'fx__echo' },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': '=?base64?!!!?=' },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': '=?base64?' },
      { 'mcp-protocol-version': '2026-07-28', 'mcp-param-text': '=?base64?%%%?=' },
      { 'mcp-protocol-version': '2025-06-18', 'mcp-session-id': 'a.nope' },
      { 'mcp-protocol-version': '9999-99-99' },
      { 'mcp-protocol-version': '', 'mcp-method': '' },
    ];
    for (const headers of headerSets)
      for (const body of bodies) {
        const response = await fetch(gateway.url!, {
          method: 'POST',
          headers: {
            'content-type': 'application/json',
            accept: 'application/json, text/event-stream',
            ...headers,
          },
          body,
        });
        await response.arrayBuffer();
        expect(response.status, `${JSON.stringify(headers)} ${body}`).toBeLessThan(500);
      }
    const client = new Client({ name: 'after', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    const result = await client.callTool({ name: 'fx__echo', arguments: { text: 'still here' } });
    expect(result.isError).toBeFalsy();
    await client.close();
  }, 60_000);
});
