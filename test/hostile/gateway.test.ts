import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { legacySession } from '../helpers/http.js';
import { type Service, startTackServe } from '../helpers/processes.js';
import { EVERYTHING, fixture, type TempProject, tempProject } from '../helpers/project.js';

const MODERN = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'attacker', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** JSON text nested `depth` levels, built as text: JSON.stringify itself overflows on such values. */
function nested(depth: number, kind: 'object' | 'array'): string {
  return kind === 'object'
    ? `${'{"a":'.repeat(depth)}"x"${'}'.repeat(depth)}`
    : `${'['.repeat(depth)}"x"${']'.repeat(depth)}`;
}

/** A tools/call body whose `message` argument is `value` (JSON text). */
function callBody(id: number, tool: string, value: string, era: 'modern' | 'legacy'): string {
  const meta = era === 'modern' ? `,"_meta":${JSON.stringify(MODERN)}` : '';
  return `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${tool}","arguments":{"message":${value}}${meta}}}`;
}

const HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

/** The headers a 2026-07-28 tools/call carries (SEP-2243). */
function modernHeaders(tool: string): Record<string, string> {
  return { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': tool };
}

/** The JSON-RPC message of a response, whether it came as JSON or as one SSE event. */
async function answer(
  response: Response,
): Promise<{ result?: Record<string, unknown>; error?: { message: string } }> {
  const text = await response.text();
  // An SSE answer opens with an empty priming event; the message is the last data line.
  const data = text.startsWith('{') ? text : ([...text.matchAll(/^data: (.+)$/gm)].at(-1)?.[1] ?? '{}');
  return JSON.parse(data);
}

function textOf(result: { content?: unknown } | undefined): string {
  return ((result?.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
}

describe('tack serve --http under attack', () => {
  let project: TempProject;
  let service: Service & { url: string };
  let url: string;

  beforeAll(async () => {
    project = tempProject();
    // A skill folder with a YAML alias bomb must not keep the gateway (which serves tack's skills) from starting.
    mkdirSync(join(project.dir, 'skills', 'bomb'), { recursive: true });
    writeFileSync(
      join(project.dir, 'skills', 'bomb', 'SKILL.md'),
      `---\nname: bomb\ndescription: &a [x, x, x, x, x, x, x, x, x]\n${'bcdefgh'
        .split('')
        .map((n, i) => `${n}: &${n} [${Array(9).fill(`*${'abcdefgh'[i]}`).join(', ')}]`)
        .join('\n')}\n---\n`,
    );
    const config = project.write('tack.json', {
      skills: ['skills'],
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        hostile: { command: process.execPath, args: [fixture('hostile-server.js')] },
      },
    });
    service = await startTackServe(BIN, config, project.env);
    url = service.url;
  }, 60_000);

  afterAll(async () => {
    await service?.stop();
    project?.[Symbol.dispose]();
  });

  it('answers every attack with an error about it while another client keeps working', async () => {
    // The bystander: a 2026-07-28 client calling the shared upstream the whole time.
    const bystander = new Client(
      { name: 'bystander', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await bystander.connect(new StreamableHTTPClientTransport(new URL(url)));
    let calls = 0;
    const failures: string[] = [];
    let attacking = true;
    const bystanding = (async () => {
      while (attacking) {
        const result = await bystander
          .callTool({ name: 'everything__echo', arguments: { message: `ping ${calls}` } })
          .catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }));
        if (result.isError || !textOf(result).includes(`ping ${calls}`)) failures.push(textOf(result));
        calls++;
      }
    })();

    const legacy = await legacySession(url, 'attacker');
    // Deep arguments: objects and arrays, both eras, more than the six that once took the upstream down.
    let id = 1;
    for (const era of ['modern', 'legacy'] as const) {
      for (const kind of ['object', 'array'] as const) {
        for (let i = 0; i < 4; i++) {
          const response = await fetch(url, {
            method: 'POST',
            headers: {
              ...HEADERS,
              ...(era === 'legacy' ? legacy : { 'mcp-protocol-version': '2026-07-28' }),
            },
            body: callBody(id++, 'everything__echo', nested(5_000, kind), era),
          });
          expect(response.status).toBe(400);
          const message = await answer(response);
          expect(message.error?.message).toMatch(/nested deeper than 64 levels/);
        }
      }
    }
    // Deep results from a hostile upstream, both eras, every shape.
    for (const shape of ['structured', 'content', 'result']) {
      const modern = await answer(
        await fetch(url, {
          method: 'POST',
          headers: { ...HEADERS, ...modernHeaders('hostile__deep_result') },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: id++,
            method: 'tools/call',
            params: { name: 'hostile__deep_result', arguments: { depth: 20_000, shape }, _meta: MODERN },
          }),
        }),
      );
      expect(JSON.stringify(modern)).toMatch(/nested deeper than 64 levels/);
      const old = await answer(
        await fetch(url, {
          method: 'POST',
          headers: { ...HEADERS, ...legacy },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: id++,
            method: 'tools/call',
            params: { name: 'hostile__deep_result', arguments: { depth: 20_000, shape } },
          }),
        }),
      );
      expect(JSON.stringify(old)).toMatch(/nested deeper than 64 levels/);
    }

    attacking = false;
    await bystanding;
    expect(failures).toEqual([]);
    expect(calls).toBeGreaterThan(0);

    // Both upstreams are still the processes they were: nothing was restarted.
    const after = await bystander.callTool({ name: 'hostile__echo', arguments: { text: 'still here' } });
    expect(textOf(after)).toBe('still here');
    // Logs are kept per project (logs/<project key>/<server>.log).
    const logs = join(project.home, 'state', 'logs');
    const file = readdirSync(logs, { recursive: true, encoding: 'utf8' }).find((f) =>
      f.endsWith('everything.log'),
    );
    expect(file).toBeDefined();
    const log = readFileSync(join(logs, file!), 'utf8');
    expect(log).not.toMatch(/failed \(|starting:.*\n[\s\S]*starting:/);
    await bystander.close();
  }, 120_000);
});

describe('tack serve over stdio', () => {
  it('refuses deep arguments without touching the upstream', async () => {
    using project = tempProject();
    const config = project.write('tack.json', {
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    });
    const client = new Client({ name: 'attacker', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--config', config],
        env: project.env as Record<string, string>,
        stderr: 'pipe',
      }),
    );
    try {
      const value = JSON.parse(nested(1_000, 'array')) as unknown; // the SDK client itself cannot send 5,000
      for (let i = 0; i < 7; i++) {
        const refused = await client
          .callTool({ name: 'everything__echo', arguments: { message: value as string } })
          .catch((error: Error) => ({ isError: true, content: [{ type: 'text', text: error.message }] }));
        expect(refused.isError).toBe(true);
        expect(textOf(refused)).toMatch(/nested deeper than 64 levels/);
      }
      const ok = await client.callTool({ name: 'everything__echo', arguments: { message: 'fine' } });
      expect(textOf(ok)).toContain('fine');
    } finally {
      await client.close();
    }
  }, 60_000);
});
