import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client, LOG_LEVEL_META_KEY, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { digest } from '../../src/util/canonical-json.js';
import { BIN } from '../helpers/cli.js';
import { postJsonRpc } from '../helpers/http.js';
import { EVERYTHING, fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

type Era = 'modern' | 'legacy';

/**
 * A downstream MCP client of the gateway, with elicitation and sampling answered like a person would (after
 * `answerDelayMs`).
 */
async function downstream(
  era: Era,
  transport: StdioClientTransport | StreamableHTTPClientTransport,
  answerDelayMs = 0,
) {
  const client = new Client(
    { name: `test-${era}`, version: '1.0.0' },
    {
      ...(era === 'modern' ? { versionNegotiation: { mode: 'auto' as const } } : {}),
      capabilities: { elicitation: { form: {} }, sampling: {} },
    },
  );
  client.setRequestHandler('elicitation/create', async (request) => {
    await new Promise((resolve) => setTimeout(resolve, answerDelayMs));
    return { action: 'accept', content: { name: `Ada (asked: ${request.params.message})` } };
  });
  client.setRequestHandler('sampling/createMessage', async () => ({
    role: 'assistant',
    model: 'test-model',
    content: { type: 'text', text: 'short and sweet' },
  }));
  await client.connect(transport);
  expect(client.getProtocolEra()).toBe(era);
  return client;
}

function text(result: { content?: unknown }): string {
  const blocks = (result.content ?? []) as Array<{ type: string; text?: string }>;
  return blocks.map((b) => b.text ?? `[${b.type}]`).join('\n');
}

describe('tack serve (gateway)', () => {
  let project: TempProject;
  let gateway: RunningGateway;
  let configFile: string;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', {
      serve: { token: '${TACK_TEST_GATEWAY_TOKEN:-gw-token}' },
      mcpServers: {
        everything: { command: process.execPath, args: [EVERYTHING, 'stdio'] },
        modern: fixtureEntry('stdio-server.js', [], { disabledTools: ['env'] }),
        legacy: fixtureEntry('legacy-stdio-server.js'),
        broken: fixtureEntry('stdio-server.js', ['--exit-at-start']),
        refusing: fixtureEntry('refusing-server.js'),
      },
    });
    configFile = join(project.dir, 'tack.json');
    gateway = await startGateway({
      config: project.load(),
      http: { port: 0 },
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    project?.[Symbol.dispose]();
  });

  const overHttp = (era: Era) =>
    downstream(
      era,
      new StreamableHTTPClientTransport(new URL(gateway.url!), {
        requestInit: { headers: { Authorization: 'Bearer gw-token' } },
      }),
    );
  const overStdio = (era: Era) =>
    downstream(
      era,
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve', '--config', configFile],
        env: { TACK_HOME: project.home, PATH: process.env.PATH ?? '' },
        stderr: 'ignore',
      }),
    );

  for (const [transport, connect] of [
    ['HTTP', overHttp],
    ['stdio', overStdio],
  ] as const) {
    for (const era of ['modern', 'legacy'] as const) {
      it(`answers a ${era} MCP client over ${transport}: server-everything's tools, resources and prompts`, async () => {
        const client = await connect(era);
        try {
          const { tools } = await client.listTools();
          const names = tools.map((t) => t.name);
          expect(names).toContain('everything__echo');
          expect(names).toContain('modern__add');
          expect(names).toContain('legacy__add');
          expect(names).not.toContain('modern__env'); // disabledTools applies
          expect(names.some((n) => n.startsWith('broken__'))).toBe(false);

          expect(
            text(await client.callTool({ name: 'everything__echo', arguments: { message: 'hi' } })),
          ).toMatch(/hi/);
          const structured = tools.find((t) => t.name === 'everything__get-structured-content');
          expect(structured?.outputSchema).toBeDefined();
          const weather = await client.callTool({
            name: 'everything__get-structured-content',
            arguments: { location: 'New York' },
          });
          expect(weather.structuredContent).toMatchObject({ temperature: expect.any(Number) });
          const image = await client.callTool({ name: 'everything__get-tiny-image', arguments: {} });
          expect((image.content as Array<{ type: string }>).map((b) => b.type)).toContain('image');

          const { resources } = await client.listResources();
          const readme = resources.find((r) => r.uri === 'tack://modern/memo://readme');
          expect(readme).toBeDefined();
          const read = await client.readResource({ uri: 'tack://modern/memo://readme' });
          expect(read.contents[0]).toMatchObject({
            uri: 'tack://modern/memo://readme',
            text: 'fixture readme',
          });
          const { resourceTemplates } = await client.listResourceTemplates();
          expect(resourceTemplates.map((t) => t.uriTemplate)).toContain('tack://legacy/memo://notes/{id}');
          const note = await client.readResource({ uri: 'tack://legacy/memo://notes/5' });
          expect(note.contents[0]).toMatchObject({ text: '# Note 5' });

          const { prompts } = await client.listPrompts();
          expect(prompts.map((p) => p.name)).toEqual(
            expect.arrayContaining(['modern__greet', 'legacy__greet', 'everything__simple-prompt']),
          );
          const greet = await client.getPrompt({ name: 'legacy__greet', arguments: { name: 'Bo' } });
          expect(greet.messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Bo.' });
        } finally {
          await client.close();
        }
      });
    }
  }

  it('passes isError, structuredContent and resource links through, namespaced so they read back', async () => {
    const client = await overHttp('modern');
    try {
      const failed = await client.callTool({ name: 'legacy__fail', arguments: {} });
      expect(failed).toMatchObject({
        isError: true,
        content: [{ type: 'text', text: 'the tool failed on purpose' }],
      });
      const sum = await client.callTool({ name: 'modern__add', arguments: { a: 20, b: 22 } });
      expect(sum.structuredContent).toEqual({ sum: 42 });
      const image = await client.callTool({ name: 'modern__image', arguments: {} });
      const link = (image.content as Array<{ type: string; uri?: string }>).find(
        (b) => b.type === 'resource_link',
      );
      expect(link?.uri).toBe('tack://modern/memo://readme');
      expect((await client.readResource({ uri: link!.uri! })).contents[0]).toMatchObject({
        text: 'fixture readme',
      });
    } finally {
      await client.close();
    }
  });

  it('forwards progress, and cancellation reaches the upstream call', async () => {
    const legacy = await overHttp('legacy');
    try {
      const progress: number[] = [];
      await legacy.callTool(
        { name: 'modern__slow', arguments: { steps: 3, delayMs: 50 } },
        { onprogress: (p) => progress.push(p.progress) },
      );
      expect(progress.slice(0, 2)).toEqual([1, 2]);
    } finally {
      await legacy.close();
    }
    for (const era of ['modern', 'legacy'] as const) {
      await cancelOnce(await overHttp(era), era);
    }
  });

  /** Cancels a slow call and finds that very call (by its argument digest) recorded as cancelled. */
  async function cancelOnce(client: Client, era: Era): Promise<void> {
    try {
      const args = { steps: 1, delayMs: era === 'legacy' ? 3001 : 3000 };
      const controller = new AbortController();
      const pending = client.callTool(
        { name: 'legacy__slow', arguments: args },
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(), 200);
      await expect(pending).rejects.toThrow();
      const recorded = async () =>
        (await gateway.host.store?.audit.recent(20))?.find((e) => e.argsSha256 === digest(args));
      await expect.poll(async () => (await recorded())?.outcome, { timeout: 5000 }).toBe('cancelled');
      expect((await recorded())?.client).toBe(`test-${era}@1.0.0 (http, ${era})`);
    } finally {
      await client.close();
    }
  }

  it('turns an upstream failure into an isError result naming the server, and stays up', async () => {
    const client = await overHttp('modern');
    try {
      const down = await client.callTool({ name: 'broken__echo', arguments: { text: 'x' } });
      expect(down.isError).toBe(true);
      expect(text(down)).toMatch(
        /^Upstream server "broken" failed: server "broken" failed to start: exited with code 2/,
      );
      const crash = await client.callTool({ name: 'legacy__crash', arguments: {} });
      expect(crash.isError).toBe(true);
      expect(text(crash)).toMatch(/^Upstream server "legacy" failed: server "legacy" exited with code 3/);
      // A JSON-RPC error the upstream answered is passed on as one, with its code.
      await expect(client.callTool({ name: 'refusing__refuse', arguments: {} })).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(/refused on purpose/),
      });
      // The upstream comes back on next use.
      expect(text(await client.callTool({ name: 'legacy__echo', arguments: { text: 'back' } }))).toBe('back');
      await expect(client.callTool({ name: 'nowhere__x', arguments: {} })).rejects.toThrow(/Unknown tool/);
    } finally {
      await client.close();
    }
  });

  it('passes argument completion through for prompts', async () => {
    const client = await overHttp('modern');
    try {
      const completion = await client.complete({
        ref: { type: 'ref/prompt', name: 'everything__completable-prompt' },
        argument: { name: 'department', value: 'Eng' },
      });
      expect(completion.completion.values).toContain('Engineering');
      const none = await client.complete({
        ref: { type: 'ref/prompt', name: 'no__such-prompt' },
        argument: { name: 'x', value: '' },
      });
      expect(none.completion.values).toEqual([]);
    } finally {
      await client.close();
    }
  });

  it('forwards the log messages an upstream sends during a call, at the level the client asked for', async () => {
    const legacy = await overStdio('legacy');
    try {
      const logs: string[] = [];
      legacy.setNotificationHandler('notifications/message', async (n) => {
        logs.push(`${n.params.level}: ${String(n.params.data)}`);
      });
      await legacy.setLoggingLevel('info');
      expect(text(await legacy.callTool({ name: 'legacy__chatter', arguments: {} }))).toBe('chattered');
      await expect.poll(() => logs).toEqual(['info: chatter at info', 'warning: chatter at warning']);
    } finally {
      await legacy.close();
    }
    const modern = await overHttp('modern');
    try {
      const logs: string[] = [];
      modern.setNotificationHandler('notifications/message', async (n) => {
        logs.push(`${n.params.level}: ${String(n.params.data)}`);
      });
      await modern.callTool({
        name: 'modern__chatter',
        arguments: {},
        _meta: { [LOG_LEVEL_META_KEY]: 'warning' },
      });
      await modern.callTool({ name: 'modern__chatter', arguments: {} }); // no level: no logs
      await expect.poll(() => logs).toEqual(['warning: chatter at warning']);
    } finally {
      await modern.close();
    }
  });

  it('writes every call to the audit log: time, client, server, tool, argument digest, duration, outcome', async () => {
    const client = await overHttp('modern');
    try {
      await client.callTool({ name: 'modern__echo', arguments: { text: 'audited' } });
      const [entry] = await gateway.host.store!.audit.recent(1);
      expect(entry).toMatchObject({
        client: 'test-modern@1.0.0 (http, modern)',
        server: 'modern',
        tool: 'echo',
        outcome: 'ok',
        argsSha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(Date.parse(entry!.at)).toBeGreaterThan(Date.now() - 60_000);
      expect(entry!.durationMs).toBeGreaterThanOrEqual(0);
      expect(JSON.stringify(entry)).not.toContain('audited'); // a digest, not the arguments
    } finally {
      await client.close();
    }
  });

  for (const [transport, connect] of [
    ['HTTP', overHttp],
    ['stdio', overStdio],
  ] as const) {
    for (const downstreamEra of ['modern', 'legacy'] as const) {
      for (const upstream of ['modern', 'legacy'] as const) {
        it(`passes elicitation and sampling from a ${upstream} upstream to a ${downstreamEra} client over ${transport}`, async () => {
          const client = await connect(downstreamEra);
          try {
            const asked = await client.callTool({ name: `${upstream}__ask_name`, arguments: {} });
            expect(text(asked)).toBe('Hello, Ada (asked: What is your name?)!');
            const summary = await client.callTool({
              name: `${upstream}__summarize`,
              arguments: { text: 'a long story' },
            });
            expect(text(summary)).toBe('Summary: short and sweet');
          } finally {
            await client.close();
          }
        });
      }
    }
  }

  for (const [transport, era] of [
    ['HTTP', 'modern'],
    ['HTTP', 'legacy'],
    ['stdio', 'legacy'],
    ['stdio', 'modern'],
  ] as const) {
    it(`tells a ${era} client over ${transport} when an upstream's tool list changes`, async () => {
      const client = await (transport === 'HTTP' ? overHttp : overStdio)(era);
      try {
        let changed = 0;
        client.setNotificationHandler('notifications/tools/list_changed', async () => {
          changed++;
        });
        if (era === 'modern') await client.listen({ toolsListChanged: true });
        const name = `late_${transport}_${era}`;
        await client.callTool({ name: 'legacy__add_tool', arguments: { name } });
        await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThan(0);
        await expect
          .poll(async () => (await client.listTools()).tools.map((t) => t.name), { timeout: 10_000 })
          .toContain(`legacy__${name}`);
        expect(text(await client.callTool({ name: `legacy__${name}`, arguments: {} }))).toBe(`${name} ran`);
      } finally {
        await client.close();
      }
    });
  }

  it('serves upstream names unchanged with serve.namespace: false', async () => {
    using plain = tempProject();
    plain.write('tack.json', {
      serve: { namespace: false },
      mcpServers: { a: fixtureEntry('stdio-server.js'), b: fixtureEntry('legacy-stdio-server.js') },
    });
    const transparent = await startGateway({
      config: plain.load(),
      http: { port: 0 },
    });
    try {
      const client = await downstream('modern', new StreamableHTTPClientTransport(new URL(transparent.url!)));
      try {
        const names = (await client.listTools()).tools.map((t) => t.name);
        expect(names).toContain('echo');
        expect(names.filter((n) => n === 'echo')).toHaveLength(1); // a's echo; b's is hidden by the clash
        expect(transparent.gateway.names().clashes).toContain('b: echo');
        expect(text(await client.callTool({ name: 'era', arguments: {} }))).toBe('modern'); // a is the 2026 one
        expect((await client.listResources()).resources.map((r) => r.uri)).toContain('memo://readme');
        await expect(client.readResource({ uri: 'memo://readme' })).rejects.toThrow(/several servers: a, b/);
        const prompt = await client.getPrompt({ name: 'greet', arguments: { name: 'Cy' } });
        expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Say hello to Cy.' });
      } finally {
        await client.close();
      }
    } finally {
      await transparent.close();
    }
  });

  it('refuses a question it cannot attribute: two calls to one upstream from one connection', async () => {
    const client = await overStdio('legacy');
    try {
      // Both calls are in flight when the first question comes; it names neither, so neither gets it.
      const outcomes = await Promise.allSettled(
        [1, 2].map(() => client.callTool({ name: 'legacy__ask_name', arguments: {} })),
      );
      const said = outcomes.map((o) =>
        o.status === 'fulfilled' ? text(o.value) : String((o.reason as Error).message),
      );
      expect(said.some((s) => /2 calls are in flight to "legacy".*cannot be routed/.test(s))).toBe(true);
      for (const s of said) expect(s).toMatch(/^Hello, Ada|cannot be routed/);
    } finally {
      await client.close();
    }
  });

  it('ignores subscriptions to servers it does not have, and closes a session that made one', async () => {
    const transport = new StreamableHTTPClientTransport(new URL(gateway.url!), {
      requestInit: { headers: { Authorization: 'Bearer gw-token' } },
    });
    const client = await downstream('legacy', transport);
    try {
      await client.subscribeResource({ uri: 'tack://nosuch/x' });
      await client.subscribeResource({ uri: 'tack://modern/memo://readme' });
      const read = client.readResource({ uri: 'tack://nosuch/x' });
      await expect(read).rejects.toMatchObject({
        code: -32602,
        message: expect.stringMatching(
          /no server "nosuch" \(servers: everything, modern, legacy, broken, refusing\)/,
        ),
      });
      await transport.terminateSession(); // throws on a 500
    } finally {
      await client.close();
    }
  });

  it('asks for the bearer token over HTTP', async () => {
    const response = await postJsonRpc(gateway.url!, { jsonrpc: '2.0', id: 1, method: 'ping' });
    expect(response.status).toBe(401);
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer /);
  });
});

describe('tack serve: resource subscriptions', () => {
  it('forwards a 2025-era client subscription upstream and the update back down', async () => {
    using project = tempProject();
    const root = join(project.dir, 'docs');
    mkdirSync(root);
    writeFileSync(join(root, 'a.md'), '# A\n\nfirst');
    writeFileSync(join(root, 'b.md'), '# B\n\nfirst');
    project.write('tack.json', {
      mcpServers: { docs: { command: process.execPath, args: [BIN, 'serve-docs', root] } },
    });
    const running = await startGateway({
      config: project.load(),
      http: { port: 0 },
    });
    const client = await downstream('legacy', new StreamableHTTPClientTransport(new URL(running.url!)));
    try {
      const updated: string[] = [];
      client.setNotificationHandler('notifications/resources/updated', async (n) => {
        updated.push(n.params.uri);
      });
      await client.subscribeResource({ uri: 'tack://docs/doc://a' });
      // The upstream subscription is in place once the docs server's listen stream carries the URI: edit
      // until an update comes through, then check that only the subscribed document was announced.
      for (let round = 1; round <= 20 && updated.length === 0; round++) {
        writeFileSync(join(root, 'b.md'), `# B\n\nedit ${round}`); // not subscribed
        writeFileSync(join(root, 'a.md'), `# A\n\nedit ${round}`);
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
      expect(new Set(updated)).toEqual(new Set(['tack://docs/doc://a']));
      const read = await client.readResource({ uri: 'tack://docs/doc://a' });
      expect(read.contents[0]).toMatchObject({ text: expect.stringMatching(/^# A\n\nedit \d+$/) });
      await client.unsubscribeResource({ uri: 'tack://docs/doc://a' });
    } finally {
      await client.close();
      await running.close();
    }
  });
});

describe('tack serve: questions from 2025-era upstreams', () => {
  let project: TempProject;
  let gateway: RunningGateway;

  beforeAll(async () => {
    project = tempProject();
    project.write('tack.json', {
      mcpServers: {
        legacy: fixtureEntry('legacy-stdio-server.js'),
        // Times out within the time a person takes to answer, unless the gateway holds the timer.
        hasty: fixtureEntry('legacy-stdio-server.js', [], { callTimeoutMs: 300 }),
      },
    });
    gateway = await startGateway({
      config: project.load(),
      http: { port: 0 },
      answerTimeoutMs: 2000,
    });
  }, 60_000);

  afterAll(async () => {
    await gateway?.close();
    project?.[Symbol.dispose]();
  });

  const connect = (era: Era, answerDelayMs = 0) =>
    downstream(era, new StreamableHTTPClientTransport(new URL(gateway.url!)), answerDelayMs);
  const audited = async (args: Record<string, unknown>) =>
    (await gateway.host.store?.audit.recent(50))?.find((e) => e.argsSha256 === digest(args));

  /** A 2026-07-28 client that takes the question and goes away (for now). */
  async function park(client: Client, args: Record<string, unknown>) {
    const first = (await client.callTool(
      { name: 'legacy__ask_name', arguments: args },
      { allowInputRequired: true },
    )) as { resultType?: string; requestState?: string };
    expect(first.resultType).toBe('input_required');
    return (name: string) => {
      const retry = {
        inputResponses: { q0: { action: 'accept', content: { name } } },
        requestState: first.requestState,
      };
      return client.callTool({ name: 'legacy__ask_name', arguments: args, ...retry });
    };
  }

  it("routes another client's question past a call waiting for its client's answer", async () => {
    const away = await connect('modern');
    const other = await connect('legacy');
    try {
      const answer = await park(away, {});
      const asked = await other.callTool({ name: 'legacy__ask_name', arguments: {} });
      expect(text(asked)).toBe('Hello, Ada (asked: What is your name?)!');
      expect(text(await answer('Bo'))).toBe('Hello, Bo!'); // the waiting call is still there for its client
    } finally {
      await away.close();
      await other.close();
    }
  });

  for (const era of ['legacy', 'modern'] as const) {
    it(`holds the upstream's call timeout while a ${era} client takes its time to answer`, async () => {
      const client = await connect(era, 1000);
      try {
        const asked = await client.callTool({ name: 'hasty__ask_name', arguments: {} });
        expect(text(asked)).toBe('Hello, Ada (asked: What is your name?)!');
      } finally {
        await client.close();
      }
    });
  }

  it('gives a 2025-era client answerTimeoutMs to answer, then fails the question', async () => {
    const client = await connect('legacy', 2600);
    try {
      const asked = await client
        .callTool({ name: 'legacy__ask_name', arguments: {} })
        .then(text, (error: Error) => error.message);
      expect(asked).toMatch(/timed out/i);
    } finally {
      await client.close();
    }
  });

  it('audits a waiting call that expires, and says so to a client that comes back too late', async () => {
    const client = await connect('modern');
    try {
      const args = { giveUpAfterMs: 50_001 };
      const answer = await park(client, args);
      await expect.poll(async () => (await audited(args))?.outcome, { timeout: 6000 }).toBe('cancelled');
      await expect(answer('Late')).rejects.toThrow(/unknown or expired \(a call waits 2000 ms/);
    } finally {
      await client.close();
    }
  });

  it('audits a waiting call whose upstream stopped waiting, and keeps its answer for the client', async () => {
    const client = await connect('modern');
    try {
      const args = { giveUpAfterMs: 300 };
      const answer = await park(client, args);
      await expect.poll(async () => (await audited(args))?.outcome, { timeout: 5000 }).toBe('ok');
      expect(text(await answer('Late'))).toBe('No name (gave up).');
    } finally {
      await client.close();
    }
  });
});
