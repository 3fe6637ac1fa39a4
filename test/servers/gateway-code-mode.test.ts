import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { startGateway } from '../../src/servers/gateway/start.js';
import { EVERYTHING, fixture, fixtureEntry, tempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();
const { cleanups } = scope;

function text(result: { content?: unknown }): string {
  return ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
}

const attack = (role: string) => ({
  command: process.execPath,
  args: [fixture('attack-server.js'), '--role', role],
});

/** A real gateway over HTTP in front of real stdio servers, and a client of it. */
async function serve(config: Record<string, unknown>, modern = false) {
  const p = tempProject('tack-gw-code-');
  cleanups.push(() => p[Symbol.dispose]());
  p.write('tack.json', config);
  const gateway = await startGateway({ config: p.load(), http: { port: 0 } });
  cleanups.push(() => gateway.close());
  const client = new Client(
    { name: 'scripter', version: '1.0.0' },
    modern ? { versionNegotiation: { mode: 'auto' as const } } : {},
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(gateway.url!), {
      requestInit: { headers: { Authorization: 'Bearer gw-token' } },
    }),
  );
  cleanups.push(() => client.close());
  return { gateway, client };
}

describe('tack serve with code mode', () => {
  it('is off by default: run_code and code_api are not listed', async () => {
    const { client } = await serve({
      serve: { token: 'gw-token' },
      mcpServers: { contacts: attack('contacts') },
    });
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['contacts__list_contacts']);
    await expect(client.callTool({ name: 'run_code', arguments: { code: 'return 1' } })).rejects.toThrow(
      /Unknown tool: run_code/,
    );
  });

  it('runs a script calling tools on two servers, each call audited; a denied one is an error it sees', async () => {
    const { gateway, client } = await serve(
      {
        serve: { token: 'gw-token', codeMode: 'on' },
        permissions: { deny: ['mcp__web__fetch_page'] },
        mcpServers: { contacts: attack('contacts'), rug: attack('rugpull'), web: attack('web') },
      },
      true,
    );
    expect(client.getProtocolEra()).toBe('modern');
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['contacts__list_contacts', 'rug__add', 'run_code', 'code_api']),
    );

    const api = await client.callTool({ name: 'code_api', arguments: { servers: ['rug', 'contacts'] } });
    expect(api.isError).toBeFalsy();
    expect(text(api)).toMatch(/declare namespace mcp\.rug[\s\S]*add\(/);
    expect(text(api)).toMatch(/declare namespace mcp\.contacts[\s\S]*list_contacts\(/);

    const progress: Array<[number, string | undefined]> = [];
    const run = await client.callTool(
      {
        name: 'run_code',
        arguments: {
          code: `const people = (await mcp.contacts.list_contacts({})).split('\\n');
const sum = await mcp.rug.add({ a: people.length, b: 40 });
return { first: people[0].split(' <')[0], sum: Number(sum) };`,
        },
      },

      { onprogress: (p) => progress.push([p.progress, p.message]) },
    );
    expect(run.isError, text(run)).toBeFalsy();
    const [, value, calls] = /^result:\n([\s\S]*)\n(\[\d+ tool calls?\])$/.exec(text(run)) ?? [];
    expect(JSON.parse(value ?? 'null')).toEqual({ first: 'Ada Lovelace', sum: 42 });
    expect(calls).toBe('[2 tool calls]');
    // Progress counts the script's calls done (the nested calls' own progress is not relayed on this token).
    await expect
      .poll(() => progress)
      .toEqual([
        [1, 'contacts__list_contacts done'],
        [2, 'rug__add done'],
      ]);
    const rows = await gateway.host.store!.audit.recent(10);
    expect(rows.map((r) => [r.server, r.tool, r.outcome, r.client])).toEqual(
      expect.arrayContaining([
        ['contacts', 'list_contacts', 'ok', 'scripter@1.0.0 (http, modern)'],
        ['rug', 'add', 'ok', 'scripter@1.0.0 (http, modern)'],
      ]),
    );

    const denied = await client.callTool({
      name: 'run_code',
      arguments: {
        code: `try { await mcp.web.fetch_page({ url: 'https://example.org' }); return 'ran'; }
catch (e) { return 'refused: ' + e.message; }`,
      },
    });
    expect(denied.isError, text(denied)).toBeFalsy();
    expect(text(denied)).toMatch(/refused: .*web__fetch_page is denied by the rule "mcp__web__fetch_page"/);
    const [row] = await gateway.host.store!.audit.recent(1);
    expect(row).toMatchObject({ server: 'web', tool: 'fetch_page', outcome: 'denied' });
    // A client's direct call is refused the same way.
    const direct = await client.callTool({
      name: 'web__fetch_page',
      arguments: { url: 'https://example.org' },
    });
    expect(direct.isError).toBe(true);
    expect(text(direct)).toMatch(/is denied by the rule/);
  });

  it('refuses a held (changed pinned) tool inside a script, with the reason', async () => {
    const { client } = await serve({
      serve: { token: 'gw-token', codeMode: 'on' },
      mcpServers: { rug: attack('rugpull') },
    });
    const first = await client.callTool({
      name: 'run_code',
      arguments: { code: 'return await mcp.rug.add({ a: 1, b: 2 })' },
    });
    expect(text(first)).toContain('result:\n3');
    // The upstream swapped in a poisoned description after that call; the gateway holds the tool back.
    await expect
      .poll(async () => (await client.listTools()).tools.map((t) => t.name), { timeout: 10_000 })
      .toEqual(['run_code', 'code_api']);
    const held = await client.callTool({
      name: 'run_code',
      arguments: {
        code: `try { return await mcp.rug.add({ a: 1, b: 2 }); } catch (e) { return 'refused: ' + e.message; }`,
      },
    });
    expect(text(held)).toMatch(/refused: rug__add is unavailable: tool add changed since it was approved/);
    const api = await client.callTool({ name: 'code_api', arguments: { servers: ['rug'] } });
    expect(api.isError).toBe(true);
    expect(text(api)).not.toContain('add(');
  });

  it("relays an upstream's question from a script's call to a 2025-era client; a 2026-07-28 one is told to call directly", async () => {
    const { gateway } = await serve({
      serve: { token: 'gw-token', codeMode: 'on' },
      mcpServers: { legacy: fixtureEntry('legacy-stdio-server.js') },
    });
    const connect = async (modern: boolean) => {
      const client = new Client(
        { name: 'asker', version: '1.0.0' },
        {
          ...(modern ? { versionNegotiation: { mode: 'auto' as const } } : {}),
          capabilities: { elicitation: { form: {} } },
        },
      );
      client.setRequestHandler('elicitation/create', async (request) => ({
        action: 'accept',
        content: { name: `Ada (asked: ${request.params.message})` },
      }));
      await client.connect(
        new StreamableHTTPClientTransport(new URL(gateway.url!), {
          requestInit: { headers: { Authorization: 'Bearer gw-token' } },
        }),
      );
      cleanups.push(() => client.close());
      return client;
    };
    const code = 'try { return await mcp.legacy.ask_name({}); } catch (e) { return "failed: " + e.message; }';
    const legacy = await connect(false);
    expect(text(await legacy.callTool({ name: 'run_code', arguments: { code } }))).toContain(
      'result:\nHello, Ada (asked: What is your name?)!',
    );
    const modern = await connect(true);
    expect(modern.getProtocolEra()).toBe('modern');
    expect(text(await modern.callTool({ name: 'run_code', arguments: { code } }))).toMatch(
      /failed: legacy__ask_name asks for input, which a script cannot give: call it directly/,
    );
    // The upstream call kept waiting for answers is cancelled now, not at the 10-minute answer timeout.
    await expect
      .poll(async () => (await gateway.host.store!.audit.recent(1))[0], { timeout: 10_000 })
      .toMatchObject({
        server: 'legacy',
        tool: 'ask_name',
        outcome: 'cancelled',
        client: 'asker@1.0.0 (http, modern)',
      });
  });

  it("one client's endless script does not stall another client's call (the engine runs off the main thread)", async () => {
    const { gateway, client } = await serve({
      serve: { token: 'gw-token', codeMode: 'on' },
      mcpServers: { contacts: attack('contacts') },
    });
    const other = new Client({ name: 'other', version: '1.0.0' });
    await other.connect(
      new StreamableHTTPClientTransport(new URL(gateway.url!), {
        requestInit: { headers: { Authorization: 'Bearer gw-token' } },
      }),
    );
    cleanups.push(() => other.close());
    let firstCallDone = false;
    let scriptDone = false;
    // One tool call (so we know the script runs), then a loop until the gateway's CPU limit (5 s) stops it.
    const script = client
      .callTool(
        { name: 'run_code', arguments: { code: 'await mcp.contacts.list_contacts({}); for (;;) {}' } },
        { onprogress: () => (firstCallDone = true), timeout: 60_000 },
      )
      .finally(() => (scriptDone = true));
    await expect.poll(() => firstCallDone, { timeout: 10_000 }).toBe(true);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const plain = await other.callTool({ name: 'contacts__list_contacts', arguments: {} });
    expect(plain.isError).toBeFalsy();
    expect(text(plain)).toContain('Ada Lovelace');
    // Answered while the script still loops.
    expect(scriptDone).toBe(false);
    const stopped = await script;
    expect(stopped.isError).toBe(true);
    expect(text(stopped)).toMatch(/more than 5000 ms of CPU time/);
  });

  it('stops the script and its call in flight when the client cancels its request', async () => {
    const { gateway, client } = await serve({
      serve: { token: 'gw-token', codeMode: 'on' },
      mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] } },
    });
    const controller = new AbortController();
    const started = Date.now();
    const call = client.callTool(
      {
        name: 'run_code',
        arguments: {
          code: 'await mcp.everything.trigger_long_running_operation({ duration: 30, steps: 30 }); return "finished";',
        },
      },
      { signal: controller.signal },
    );
    setTimeout(() => controller.abort(new Error('user stopped it')), 500);
    await expect(call).rejects.toThrow();
    // The script's call upstream was cancelled with it, not left to run its 30 s: the audit log says so.
    await expect
      .poll(async () => (await gateway.host.store!.audit.recent(1))[0], { timeout: 10_000 })
      .toMatchObject({ server: 'everything', tool: 'trigger-long-running-operation', outcome: 'cancelled' });
    expect(Date.now() - started).toBeLessThan(25_000);
  });
});
