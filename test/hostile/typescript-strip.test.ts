import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BIN } from '../helpers/cli.js';
import { type Service, startTackServe } from '../helpers/processes.js';
import { fixture, type TempProject, tempProject } from '../helpers/project.js';

/**
 * Issue 28, defect 5: one 150-byte TypeScript script froze a shared `tack serve`. sucrase's work doubles with each
 * level of nested `<T>(` (21 levels: 14 s, 22: about 28 s), and it ran on the gateway's main thread, outside the
 * script's limits: every other client waited. It runs on the engine's thread now, under the script's CPU limit.
 */
const nested = (levels: number) => `const x = 1;\nreturn ${'<T>('.repeat(levels)}x${')'.repeat(levels)};`;

function textOf(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
}

describe('tack serve --http: the worst TypeScript for run_code', () => {
  let project: TempProject;
  let service: Service & { url: string };
  const clients: Client[] = [];

  async function connect(name: string): Promise<Client> {
    const client = new Client({ name, version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(service.url)));
    clients.push(client);
    return client;
  }

  beforeAll(async () => {
    project = tempProject();
    const config = project.write('tack.json', {
      serve: { codeMode: 'on' },
      mcpServers: {
        contacts: { command: process.execPath, args: [fixture('attack-server.js'), '--role', 'contacts'] },
      },
    });
    service = await startTackServe(BIN, config, project.env);
  }, 60_000);

  afterAll(async () => {
    for (const client of clients) await client.close().catch(() => {});
    await service?.stop();
    project?.[Symbol.dispose]();
  });

  it("stops at the script's CPU limit with a clear error, and another client's ping answers meanwhile", async () => {
    const [scripter, other] = [await connect('scripter'), await connect('other')];
    await other.ping(); // the second client's session is set up before the clock starts
    const started = performance.now();
    let scriptMs = 0;
    const script = scripter
      .callTool(
        { name: 'run_code', arguments: { code: nested(22), language: 'typescript' } },
        { timeout: 60_000 },
      )
      .finally(() => {
        scriptMs = performance.now() - started;
      });
    script.catch(() => {}); // a failed assertion below closes the client under it
    // The script is being stripped now (the gateway's default CPU limit is 5 s).
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    const pinged = performance.now();
    await other.ping();
    const pingMs = performance.now() - pinged;
    const health = await fetch(new URL('/healthz', service.url));
    const healthMs = performance.now() - pinged;
    expect(health.status).toBe(200);
    // Answered while the script still runs: a frozen gateway answered only after stripping (tens of seconds).
    expect(scriptMs).toBe(0);
    // The issue asks for 100 ms; 1 s is the bound on a loaded 2-core machine, still far from a freeze.
    expect(pingMs).toBeLessThan(1_000);
    expect(healthMs).toBeLessThan(2_000);

    const result = await script;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toMatch(
      /^run_code: stopped: TypeScript: stripping the types took longer than the script's time limit of 5000 ms; /,
    );
    // The CPU limit and its grace, with room for a loaded machine; today's code took ~28 s (or more, loaded).
    expect(scriptMs).toBeLessThan(15_000);

    // The gateway goes on running scripts, TypeScript too.
    const next = await other.callTool({
      name: 'run_code',
      arguments: { code: 'const n: number = 41;\nreturn <number>n + 1;', language: 'typescript' },
    });
    expect(textOf(next)).toBe('result:\n42\n[0 tool calls]');
  }, 60_000);
});
