import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  fromJsonSchema,
  type JsonSchemaType,
  McpServer,
  PROTOCOL_VERSION_META_KEY,
} from '@modelcontextprotocol/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { type Served, serveHttp } from '../../src/servers/serve.js';
import { paramHeaderDeclarations } from '../../src/servers/serving/mcp-param-headers.js';
import { postJsonRpc } from '../helpers/http.js';
import { type TempProject, tempProject } from '../helpers/project.js';

/**
 * SEP-2243 through `tack serve --http`: a 2026-07-28 tools/call whose tool mirrors arguments into
 * `Mcp-Param-*` headers (`x-mcp-header` in its input schema) is checked against its body by the gateway, which
 * serves the upstream's raw schema through the low-level Server (the SDK checks only McpServer tools).
 */

const MODERN = '2026-07-28';
const b64 = (text: string) => `=?base64?${Buffer.from(text, 'utf8').toString('base64')}?=`;

/** The upstream: one tool with two header parameters (a string and an integer) and one plain argument. */
function upstream(): McpServer {
  const server = new McpServer({ name: 'headers-upstream', version: '1.0.0' });
  server.registerTool(
    'deploy',
    {
      description: 'Deploys to a region',
      inputSchema: fromJsonSchema<{ region?: string; replicas?: number; note?: string }>({
        type: 'object',
        properties: {
          region: { type: 'string', 'x-mcp-header': 'Region' },
          replicas: { type: 'integer', 'x-mcp-header': 'Replicas' },
          note: { type: 'string' },
        },
      } as JsonSchemaType),
    },
    async (args) => ({
      content: [{ type: 'text', text: `region=${args.region ?? '-'} replicas=${args.replicas ?? '-'}` }],
    }),
  );
  server.registerTool('plain', { description: 'No header parameters' }, async () => ({
    content: [{ type: 'text', text: 'plain' }],
  }));
  return server;
}

interface RpcAnswer {
  status: number;
  body: { result?: { content?: Array<{ text?: string }> }; error?: { code: number; data?: unknown } };
}

/** POSTs a 2026-07-28 tools/call with the standard headers and `headers`; reads a JSON or SSE answer. */
async function callTool(
  url: string,
  name: string,
  args: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<RpcAnswer> {
  const response = await postJsonRpc(
    url,
    {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          [PROTOCOL_VERSION_META_KEY]: MODERN,
          [CLIENT_INFO_META_KEY]: { name: 'raw-test', version: '1.0.0' },
          [CLIENT_CAPABILITIES_META_KEY]: {},
        },
      },
    },
    { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': name, ...headers },
  );
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data:'))
        .map((line) => line.slice(5).trim())
        .filter(Boolean)
        .at(-1)
    : text;
  return { status: response.status, body: JSON.parse(json ?? '{}') as RpcAnswer['body'] };
}

function expectMismatch(answer: RpcAnswer, header: string) {
  expect(answer.status).toBe(400);
  expect(answer.body.error?.code).toBe(-32020);
  expect(answer.body.error?.data).toMatchObject({ mismatch: { header } });
}

let up: Served;

beforeAll(async () => {
  up = await serveHttp(() => upstream(), { port: 0 });
});

afterAll(async () => {
  await up?.close();
});

describe.each([
  { mode: 'namespaced', namespace: true, tool: 'up__deploy', plain: 'up__plain' },
  { mode: 'flat', namespace: false, tool: 'deploy', plain: 'plain' },
])('tack serve --http checks Mcp-Param-* headers ($mode)', ({ namespace, tool, plain }) => {
  let project: TempProject;
  let gateway: RunningGateway;
  let url: string;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', {
      serve: { namespace },
      mcpServers: { up: { type: 'http', url: up.url } },
    });
    gateway = await startGateway({ config: project.load(), http: { port: 0 } });
    url = gateway.url!;
  });

  afterAll(async () => {
    await gateway?.close();
    project?.[Symbol.dispose]();
  });

  it('serves the upstream schema with its x-mcp-header annotations', async () => {
    const answer = await postJsonRpc(
      url,
      {
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/list',
        params: {
          _meta: {
            [PROTOCOL_VERSION_META_KEY]: MODERN,
            [CLIENT_INFO_META_KEY]: { name: 'raw-test', version: '1.0.0' },
            [CLIENT_CAPABILITIES_META_KEY]: {},
          },
        },
      },
      { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/list', accept: 'application/json' },
    );
    const body = (await answer.json()) as {
      result: { tools: Array<{ name: string; inputSchema: unknown }> };
    };
    const deploy = body.result.tools.find((t) => t.name === tool);
    expect(deploy?.inputSchema).toMatchObject({ properties: { region: { 'x-mcp-header': 'Region' } } });
  });

  it('passes a call whose headers match its arguments (literal, Base64, numeric)', async () => {
    const literal = await callTool(
      url,
      tool,
      { region: 'us-west1', replicas: 3 },
      {
        'mcp-param-region': 'us-west1',
        'mcp-param-replicas': '3',
      },
    );
    expect(literal.status).toBe(200);
    expect(literal.body.result?.content?.[0]?.text).toBe('region=us-west1 replicas=3');

    // Non-ASCII travels Base64-encoded; an integer compares numerically (3.0 is 3).
    const encoded = await callTool(
      url,
      tool,
      { region: 'zürich', replicas: 3 },
      {
        'mcp-param-region': b64('zürich'),
        'mcp-param-replicas': '3.0',
      },
    );
    expect(encoded.status).toBe(200);
    expect(encoded.body.result?.content?.[0]?.text).toBe('region=zürich replicas=3');

    // An argument the body does not carry needs no header; a header for it is ignored.
    const absent = await callTool(url, tool, { note: 'x' }, { 'mcp-param-region': 'ignored' });
    expect(absent.status).toBe(200);
    expect(absent.body.result?.content?.[0]?.text).toBe('region=- replicas=-');
  });

  it('answers a header that disagrees with the body with 400 / -32020', async () => {
    expectMismatch(
      await callTool(url, tool, { region: 'us-west1' }, { 'mcp-param-region': 'eu-central1' }),
      'Mcp-Param-Region',
    );
    expectMismatch(
      await callTool(
        url,
        tool,
        { region: 'us-west1', replicas: 3 },
        {
          'mcp-param-region': 'us-west1',
          'mcp-param-replicas': '4',
        },
      ),
      'Mcp-Param-Replicas',
    );
  });

  it('answers a missing header with 400 / -32020', async () => {
    expectMismatch(await callTool(url, tool, { region: 'us-west1' }), 'Mcp-Param-Region');
  });

  it('rejects a Base64 value with invalid characters or padding', async () => {
    expectMismatch(
      await callTool(url, tool, { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVs!!!bG8=?=' }),
      'Mcp-Param-Region',
    );
    expectMismatch(
      await callTool(url, tool, { region: 'Hello' }, { 'mcp-param-region': '=?base64?SGVsbG8?=' }),
      'Mcp-Param-Region',
    );
    // Without both the prefix and the suffix a value is a literal, compared as it is.
    const literal = await callTool(
      url,
      tool,
      { region: '=?base64?SGVsbG8=' },
      {
        'mcp-param-region': '=?base64?SGVsbG8=',
      },
    );
    expect(literal.status).toBe(200);
  });

  it('leaves tools without header parameters alone', async () => {
    const answer = await callTool(url, plain, {}, { 'mcp-param-region': 'anything' });
    expect(answer.status).toBe(200);
    expect(answer.body.result?.content?.[0]?.text).toBe('plain');
  });

  it("passes the SDK client's own calls (it mirrors the arguments itself)", async () => {
    const client = new Client(
      { name: 'sdk-test', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      expect(client.getProtocolEra()).toBe('modern');
      await client.listTools();
      const result = await client.callTool({ name: tool, arguments: { region: 'ap-south1', replicas: 2 } });
      expect((result.content as Array<{ text?: string }>)[0]?.text).toBe('region=ap-south1 replicas=2');
    } finally {
      await client.close();
    }
  });
});

describe('x-mcp-header declarations', () => {
  it('finds declarations reached through properties, at any depth', () => {
    const declarations = paramHeaderDeclarations({
      type: 'object',
      properties: {
        target: {
          type: 'object',
          properties: { zone: { type: 'string', 'x-mcp-header': 'Zone' } },
        },
        dryRun: { type: 'boolean', 'x-mcp-header': 'Dry-Run' },
      },
    });
    expect(declarations).toEqual([
      { path: ['target', 'zone'], headerName: 'Zone', type: 'string' },
      { path: ['dryRun'], headerName: 'Dry-Run', type: 'boolean' },
    ]);
  });

  it('expects no headers for an invalid declaration (clients leave such a tool out)', () => {
    const invalid = [
      {
        type: 'object',
        properties: { list: { type: 'array', items: { type: 'string', 'x-mcp-header': 'Item' } } },
      },
      { type: 'object', properties: { a: { type: 'string', 'x-mcp-header': 'Has Space' } } },
      { type: 'object', properties: { a: { type: 'object', 'x-mcp-header': 'Obj' } } },
      {
        type: 'object',
        properties: {
          a: { type: 'string', 'x-mcp-header': 'Dup' },
          b: { type: 'string', 'x-mcp-header': 'dup' },
        },
      },
    ];
    for (const schema of invalid) expect(paramHeaderDeclarations(schema)).toBeUndefined();
  });
});
