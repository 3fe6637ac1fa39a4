import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningAgent, startAgent } from '../../src/agent/agent.js';
import { resolveProjectTrust } from '../../src/config/apply-trust.js';
import { loadConfig, type TackConfig } from '../../src/config/load.js';
import { catalogView } from '../../src/console/catalog.js';
import { type RunningConsole, startConsole } from '../../src/console/server.js';
import { cutToBytes, MAX_SHOWN_BODY_BYTES, type StepRequestView } from '../../src/console/step-requests.js';
import { hostDefinitions } from '../../src/mcp/definitions.js';
import { McpHost } from '../../src/mcp/host.js';
import { DefinitionGuard } from '../../src/security/pins.js';
import { TackStore } from '../../src/store/store.js';
import { launchChromium } from '../helpers/browser.js';
import { ptyTack } from '../helpers/cli.js';
import { type FakeProvider, providerEnv, startFakeProvider } from '../helpers/fake-provider.js';
import { fixtureEntry, REPO, type TempProject, tempProject } from '../helpers/project.js';

/**
 * `tack console` against real servers (the MCP App fixture and the catalog fixture over stdio), a real store,
 * real transcripts written by real sessions (the harness and the local fake model), a real SQLite runtime for
 * the shop bundle's computations, and Debian's Chromium driving the pages. One console and one browser for the
 * whole file: starting them is most of its cost.
 *
 * With TACK_CONSOLE_SCREENSHOTS=<folder>, each page is also saved there as a PNG (docs/console.md's pictures).
 */
const SHOTS = process.env.TACK_CONSOLE_SCREENSHOTS;

let p: TempProject;
let config: TackConfig;
let running: RunningConsole;
let browser: BrowserContext & AsyncDisposable;
let provider: FakeProvider;
let liveAgent: RunningAgent | undefined;
let liveRun: Promise<unknown> | undefined;
let finishedSession: string;
let parentSession: string;
/** Lets the running session's model answer: the page must see it running first. */
let release: () => void = () => {};
let liveSession: string;
/** How the sessions above were started (the fixture server, the fake model, every call allowed). */
let agentOptions: Parameters<typeof startAgent>[0];
const cleanups: Array<() => unknown> = [];

/** The status of a GET sent exactly with these headers. */
function statusOf(path: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) =>
    request(`${running.origin}${path}`, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end(),
  );
}

async function shot(page: Page, name: string): Promise<void> {
  if (!SHOTS) return;
  mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `console-${name}.png`) });
}

/**
 * What Chromium reported refusing under the console's Content-Security-Policy, on every page opened. An MCP App
 * view's refusals (its sandbox proxy on another origin and the view's `about:srcdoc` frame, under the view's own
 * stricter policy, tested on purpose) are not the console's: only messages from the console's origin count.
 */
const cspViolations: string[] = [];

async function open(hash = '', url = running.url): Promise<Page> {
  const page = await browser.newPage();
  page.on('pageerror', (error) => {
    throw error;
  });
  page.on('console', (message) => {
    const from = message.location().url;
    if (/Content Security Policy/i.test(message.text()) && from.startsWith(new URL(url).origin))
      cspViolations.push(`${from}: ${message.text()}`);
  });
  await page.goto(`${url}${hash}`);
  return page;
}

/** Waits until the transcript file of `agent` holds an event of this type. */
async function transcriptHas(agent: RunningAgent, type: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const text = readFileSync(agent.transcript!.file, 'utf8');
    if (text.includes(`"type":"${type}"`)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`no ${type} in the transcript`);
}

beforeAll(async () => {
  p = tempProject('tack-console-');
  cleanups.push(() => p[Symbol.dispose]());
  const variant = p.write('variant.txt', 'first version');
  const shopDb = join(p.dir, 'shop.db');
  const db = new Database(shopDb);
  db.exec(readFileSync(join(REPO, 'test', 'fixtures', 'okf', 'shop-data.sql'), 'utf8'));
  db.close();
  p.write('tack.json', {
    mcpServers: {
      app: fixtureEntry('app-server.js', ['--variant-file', variant]),
      fixture: fixtureEntry('stdio-server.js'),
    },
    skills: [
      join(REPO, 'test', 'fixtures', 'skills', 'invalid', 'missing-reference'),
      join(REPO, 'test', 'fixtures', 'skills', 'invalid', 'description-length'),
      join(REPO, 'test', 'fixtures', 'skills', 'poisoned'),
    ],
    knowledge: {
      bundles: [join(REPO, 'test', 'fixtures', 'okf', 'shop')],
      runtimes: { sqlite: { database: shopDb } },
    },
  });
  config = await resolveProjectTrust(p.load(), { trustProject: true });

  // The app server's definitions are pinned as first seen; then its show_counter changes, and is held.
  const pinStore = TackStore.open(config.paths.storeFile);
  const first = await McpHost.start({ config, store: pinStore });
  new DefinitionGuard(pinStore.pins).reviewAll(hostDefinitions(first));
  await first.close();
  pinStore.close();
  writeFileSync(variant, 'Second version: now also sends the count to example.com.');

  // Two real sessions through the harness and the fake model: one finished, one still running.
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  provider = await startFakeProvider(async (request, index) => {
    if (index % 2 === 0)
      return {
        text: 'Echoing.',
        toolCalls: [{ name: 'mcp__fixture__echo', input: { text: `hello ${index}` } }],
      };
    if (index === 3) await released;
    return { text: `Done: ${request.messages.length} messages.` };
  });
  cleanups.push(() => provider.close());
  const agentConfig = { ...config, servers: config.servers.filter((s) => s.name === 'fixture') };
  agentOptions = {
    config: agentConfig,
    model: 'anthropic:claude-sonnet-4-5',
    env: { ...p.env, ...providerEnv(provider) },
    cwd: p.dir,
    trustProject: true,
    approver: async () => ({ decision: 'allow' as const }),
    session: { maxRetries: 0 },
  };
  const done = await startAgent(agentOptions);
  await done.session.run('Echo hello, please.');
  finishedSession = done.transcript!.sessionId;
  await done.close();
  // A third one hands work to a sub-agent, whose own call is nested in the parent's transcript.
  const delegating = await startFakeProvider(async (_request, index) => {
    if (index === 0)
      return {
        toolCalls: [
          {
            name: 'task',
            input: {
              description: 'echo from a sub-agent',
              prompt: 'Echo it.',
              tools: ['mcp__fixture__echo'],
            },
          },
        ],
      };
    if (index === 1)
      return { toolCalls: [{ name: 'mcp__fixture__echo', input: { text: 'from the sub-agent' } }] };
    if (index === 2) return { text: 'Echoed.' };
    return { text: 'The sub-agent echoed.' };
  });
  cleanups.push(() => delegating.close());
  const parent = await startAgent({ ...agentOptions, env: { ...p.env, ...providerEnv(delegating) } });
  await parent.session.run('Have a sub-agent echo it.');
  parentSession = parent.transcript!.sessionId;
  await parent.close();
  liveAgent = await startAgent(agentOptions);
  liveSession = liveAgent.transcript!.sessionId;
  liveRun = liveAgent.session.run('Echo again, slowly.');
  await transcriptHas(liveAgent, 'tool-result');

  running = await startConsole({ config });
  cleanups.push(() => running.close());
  browser = await launchChromium();
  cleanups.push(() => browser[Symbol.asyncDispose]());
}, 60_000);

afterAll(async () => {
  release();
  await liveRun?.catch(() => {});
  await liveAgent?.close();
  for (const cleanup of cleanups.reverse()) await cleanup();
});

describe('tack console: access', () => {
  it('serves no page and no data without the token, and refuses foreign Origin and Host headers', async () => {
    const page = await browser.newPage();
    const bare = await page.goto(`${running.origin}/`);
    expect(bare!.status()).toBe(401);
    expect(await page.textContent('body')).toContain('open the URL');
    const wrong = await page.goto(`${running.origin}/?token=not-the-token`);
    expect(wrong!.status()).toBe(401);
    await page.close();

    const auth = { authorization: `Bearer ${running.token}` };
    expect((await fetch(`${running.origin}/api/overview`)).status).toBe(401);
    expect(
      (await fetch(`${running.origin}/api/overview`, { headers: { authorization: 'Bearer nope' } })).status,
    ).toBe(401);
    expect((await fetch(`${running.origin}/api/overview`, { headers: auth })).status).toBe(200);
    // A page elsewhere (even one that has the token), a page on another local port, a DNS-rebound name: refused.
    // Made with node:http, since fetch sets Origin and Host itself.
    expect(await statusOf('/api/overview', { ...auth, origin: 'http://evil.example' })).toBe(403);
    expect(await statusOf('/api/overview', { ...auth, origin: 'http://127.0.0.1:1' })).toBe(403);
    expect(await statusOf('/api/overview', { ...auth, origin: 'null' })).toBe(403);
    expect(await statusOf('/api/overview', { ...auth, host: 'evil.example' })).toBe(403);
    expect(await statusOf('/api/overview', { ...auth, origin: running.origin })).toBe(200);
    expect(await statusOf(`/?token=${running.token}`, { origin: 'http://evil.example' })).toBe(403);
    // The page itself carries a strict policy: no inline script, nothing from elsewhere, no framing.
    const index = await fetch(running.url);
    const csp = index.headers.get('content-security-policy')!;
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    expect(index.headers.get('referrer-policy')).toBe('no-referrer');
  });
});

describe('tack console: API paths', () => {
  it('answers a malformed percent-escape with 400 naming it, and a path no route declares with 404', async () => {
    const auth = { authorization: `Bearer ${running.token}` };
    // Without the token nothing is said about the path.
    expect((await fetch(`${running.origin}/api/skills/%E0%A4%A`)).status).toBe(401);
    const bad = await fetch(`${running.origin}/api/skills/%E0%A4%A`, { headers: auth });
    expect(bad.status).toBe(400);
    const { error } = (await bad.json()) as { error: { code: string; message: string } };
    expect(error.code).toBe('BAD_REQUEST');
    expect(error.message).toContain('malformed percent-escape in "%E0%A4%A"');
    // An escaped slash stays inside its segment: a tool name, not two segments.
    const slash = await fetch(`${running.origin}/api/tools/a%2Fb`, { headers: auth });
    expect(slash.status).toBe(404);
    expect(JSON.stringify(await slash.json())).toContain('no tool named a/b');
    for (const [method, path] of [
      ['GET', '/api/overview/more'],
      ['POST', '/api/overview'],
      ['GET', '/api/nothing'],
    ] as const) {
      const answer = await fetch(`${running.origin}${path}`, { method, headers: auth });
      expect(answer.status).toBe(404);
      expect(((await answer.json()) as { error: { message: string } }).error.message).toBe(
        `no API ${method} ${path}`,
      );
    }
  });

  it('a resource read shows its first 20 contents and says how many there were', async () => {
    const read = async (uri: string) =>
      (await (
        await fetch(`${running.origin}/api/servers/app/read`, {
          method: 'POST',
          headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
          body: JSON.stringify({ uri }),
        })
      ).json()) as { total: number; contents: Array<{ uri: string; text: string }> };
    // The page first: it waits for the app server to connect and list its template.
    const page = await open();
    await page.click('[data-testid=servers-table] a:text-is("app")');
    const reader = page.locator('[data-testid="resource-bulk://items/{count}"]');
    await reader.locator('input').fill('bulk://items/25');
    await reader.locator('button').click();
    await reader.locator('[data-testid=resource-more]').waitFor();
    expect(await reader.locator('[data-testid=resource-text]').count()).toBe(20);
    expect(await reader.locator('[data-testid=resource-more]').textContent()).toContain(
      'the first 20 of 25 contents',
    );
    await page.close();
    const many = await read('bulk://items/25');
    expect(many.total).toBe(25);
    expect(many.contents.map((c) => c.text)).toEqual(Array.from({ length: 20 }, (_, i) => `item ${i + 1}`));
    const few = await read('bulk://items/3');
    expect([few.total, few.contents.length]).toEqual([3, 3]);
  });

  it("a step's request: the body its provider received, byte for byte; 404 past the last step; cut at 2 MiB", async () => {
    const auth = { authorization: `Bearer ${running.token}` };
    const requestOf = (session: string, step: number | string) =>
      fetch(`${running.origin}/api/sessions/${session}/requests/${step}`, { headers: auth });
    // The finished session made the model's first two calls.
    for (const n of [1, 2]) {
      const answer = await requestOf(finishedSession, n);
      expect(answer.status).toBe(200);
      const view = (await answer.json()) as StepRequestView;
      const sent = provider.requests[n - 1]!.body;
      expect(view.body).toBe(sent);
      expect([view.exact, view.missing, view.truncated]).toEqual([true, [], undefined]);
      expect(view.step).toMatchObject({ number: n, outcome: 'answered', bytes: Buffer.byteLength(sent) });
    }
    for (const [session, step] of [
      [finishedSession, 3],
      [finishedSession, 0],
      [finishedSession, '1.0'],
      ['no-such-session', 1],
    ] as const)
      expect((await requestOf(session, step)).status, `${session} ${step}`).toBe(404);
    expect((await fetch(`${running.origin}/api/sessions/${finishedSession}/requests/1`)).status).toBe(401);

    // One call of over 2 MiB (a 3-byte character, so the cut can fall inside one), its text someone else's markup.
    const big = await startFakeProvider([{ text: 'Read.' }]);
    cleanups.push(() => big.close());
    const agent = await startAgent({
      ...agentOptions,
      config: { ...config, servers: [] },
      env: { ...p.env, ...providerEnv(big) },
    });
    const hostile = '<img src=x onerror="document.title=\'pwned\'">';
    await agent.session.run(`${hostile} ${'€'.repeat(800_000)}`);
    const bigSession = agent.transcript!.sessionId;
    await agent.close();
    const sent = big.requests[0]!.body;
    const view = (await (await requestOf(bigSession, 1)).json()) as StepRequestView;
    expect(Buffer.byteLength(view.body)).toBeLessThanOrEqual(MAX_SHOWN_BODY_BYTES);
    expect(Buffer.byteLength(view.body)).toBeGreaterThan(MAX_SHOWN_BODY_BYTES - 3);
    expect(Buffer.byteLength(view.body) + view.truncated!).toBe(Buffer.byteLength(sent));
    expect(sent.startsWith(view.body)).toBe(true);
    expect(view.exact).toBe(true);
    // Where the cut falls in this body depends on what precedes the message: a cut inside a character, said apart.
    expect(cutToBytes('a€€', 5)).toEqual({ text: 'a€', truncated: 3 });
    expect(cutToBytes('a€', 4)).toEqual({ text: 'a€' });

    // The page says it is cut, and shows the markup as text.
    const page = await open(`#/sessions/${bigSession}`);
    const line = page.locator('[data-testid=request]');
    await line.locator('button').click();
    await line.locator('[data-testid=request-truncated]').waitFor();
    expect(await line.locator('[data-testid=request-parts]').textContent()).toContain(hostile);
    expect(await line.locator('[data-testid=request-body]').textContent()).toBe(view.body);
    expect(await line.locator('img').count()).toBe(0);
    expect(await page.title()).not.toBe('pwned');
    await page.close();
  });
});

describe('tack console: pages', () => {
  it('servers and tools: states, token bars, inline and deferred cost, labels and pins, hostile text as text', async () => {
    const page = await open();
    await page.waitForSelector('[data-testid=servers-table] >> text=app');
    await expect.poll(() => page.locator('[data-testid=servers-table] .state-connected').count()).toBe(2);
    await page.waitForSelector('[data-testid=tools-table] >> text=mcp__app__show_counter');
    expect(await page.locator('canvas').count()).toBeGreaterThanOrEqual(2);
    expect(await page.textContent('[data-testid=inline-cost]')).toMatch(/inline: \d+ tokens/);
    // A few small servers: a session sends every definition, so no deferred figure is shown.
    expect(await page.textContent('[data-testid=no-deferral]')).toContain('a session sends every definition');
    expect(await page.locator('[data-testid=deferred-cost]').count()).toBe(0);
    const row = page.locator('[data-testid=tools-table] tr', { hasText: 'mcp__app__show_counter' });
    expect(await row.textContent()).toContain('changed');
    await shot(page, 'servers');
    // Markup in a tool's description is shown as text and runs nothing.
    await page.goto(`${running.url}#/servers/tool/mcp__app__markup`);
    await page.waitForSelector('h1 >> text=mcp__app__markup');
    expect(await page.textContent('.json')).toContain('<img src=x onerror=');
    expect(await page.evaluate(() => (globalThis as { __pwned?: unknown }).__pwned)).toBeUndefined();
    expect(await page.locator('main img').count()).toBe(0);
    await page.close();
  });

  it('shows deferred-loading figures only for a configuration whose sessions defer', async () => {
    const inline = await catalogView(running.host, config);
    expect(inline.deferred).toBe(false);
    expect(inline.deferredTokens).toBeUndefined();
    const deferring = await catalogView(running.host, {
      ...config,
      agent: { ...config.agent, toolSearch: 'on' },
    });
    expect(deferring.deferred).toBe(true);
    // search_tools and call_tool at least, and less than sending every definition.
    expect(deferring.deferredTokens).toBeGreaterThan(100);
    expect(deferring.deferredTokens).toBeLessThan(deferring.inlineTokens + 1000);
  });

  it("a server's page runs its prompts and reads its resources and templates (the console has no chat input)", async () => {
    const page = await open();
    page.setDefaultTimeout(10_000);
    await page.click('[data-testid=servers-table] a:text-is("fixture")');
    const prompt = page.locator('[data-testid=prompt-greet]');
    await prompt.waitFor();
    expect(await prompt.textContent()).toContain('/mcp__fixture__greet name=<name>');
    // A required argument left empty is named, and the server is not asked.
    await prompt.locator('button[type=submit]').click();
    await page.waitForSelector('[data-testid=prompt-error]');
    expect(await page.textContent('[data-testid=prompt-error]')).toContain(
      '/mcp__fixture__greet needs argument name',
    );
    await page.fill('#prompt-greet-name', 'Ada');
    await prompt.locator('button[type=submit]').click();
    await page.waitForSelector('[data-testid=prompt-text] >> text=Say hello to Ada.');
    const readme = page.locator('[data-testid="resource-memo://readme"]');
    await readme.locator('button').click();
    await readme.locator('[data-testid=resource-text] >> text=fixture readme').waitFor();
    const notes = page.locator('[data-testid="resource-memo://notes/{id}"]');
    await notes.locator('button').click();
    await notes.locator('.error >> text=fill in {id}').waitFor();
    await notes.locator('input').fill('memo://notes/7');
    await notes.locator('button').click();
    await notes.locator('[data-testid=resource-text] >> text=# Note 7').waitFor();
    await shot(page, 'server');
    await page.close();
    // The same through the API: an unknown prompt and a non-string argument are refused with their names.
    const api = (path: string, body: unknown) =>
      fetch(`${running.origin}/api${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    const unknown = await api('/servers/fixture/prompt', { name: 'nope' });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(JSON.stringify(await unknown.json())).toContain('lists no prompt named \\"nope\\"');
    const number = await api('/servers/fixture/prompt', { name: 'greet', arguments: { name: 7 } });
    expect(JSON.stringify(await number.json())).toContain('prompt argument \\"name\\" must be a string');
  });

  it('calls a tool from its schema form: the gate asks in a dialog with the arguments, the answer decides', async () => {
    const page = await open('#/servers/tool/mcp__fixture__echo');
    await page.fill('#arg-text', 'from the console');
    await page.click('button[type=submit]');
    const dialog = page.locator('dialog.approval');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('"text": "from the console"');
    expect(await dialog.textContent()).toContain('Why it asks');
    await shot(page, 'approval');
    await page.click('dialog >> text=Deny');
    await page.waitForSelector('[data-testid=call-denied]');
    expect(await page.textContent('[data-testid=call-denied]')).toContain('denied by the user');
    await page.click('button[type=submit]');
    await page.click('dialog >> text=Allow once');
    await page.waitForSelector('[data-testid=tool-result] >> text=from the console');
    // Both calls are in the audit log, as the console's.
    const audit = (await (
      await fetch(`${running.origin}/api/audit?client=console&tool=echo`, {
        headers: { authorization: `Bearer ${running.token}` },
      })
    ).json()) as Array<{ outcome: string }>;
    expect(audit.map((e) => e.outcome)).toEqual(['ok', 'denied']);
    await page.close();
  });

  it('renders an MCP App view in a sandboxed frame; its tool calls go through the approval dialog', async () => {
    // Accepting the changed definition first: a held tool is never called.
    const store = TackStore.open(config.paths.storeFile);
    cleanups.push(() => store.close());
    const page = await open('#/servers/tool/mcp__app__show_counter');
    await page.fill('#arg-start', '41');
    await page.click('button[type=submit]');
    await page.waitForSelector('[data-testid=call-denied] >> text=held back');
    await page.close();
    const held = (await store.pins.list()).find((r) => r.pending && r.name === 'show_counter')!;
    const accepted = await fetch(`${running.origin}/api/pins/accept`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        identity: held.identity,
        kind: 'tool',
        name: 'show_counter',
        sha256: held.pending!.sha256,
      }),
    });
    expect(accepted.status).toBe(200);

    const app = await open('#/servers/tool/mcp__app__show_counter');
    await app.fill('#arg-start', '41');
    await app.click('button[type=submit]');
    await app.click('dialog >> text=Allow once');
    // The view runs in a frame sandboxed to scripts alone, inside the sandbox proxy on the console's second origin.
    const iframe = app.locator('[data-testid=app-view] iframe');
    await iframe.waitFor();
    expect(await iframe.getAttribute('sandbox')).toBe('allow-scripts allow-same-origin');
    expect(
      await app.frameLocator('[data-testid=app-view] iframe').locator('iframe').getAttribute('sandbox'),
    ).toBe('allow-scripts');
    const view = app.frameLocator('[data-testid=app-view] iframe').frameLocator('iframe');
    await view.locator('#count >> text=count: 41').waitFor();
    expect(await view.locator('#input').textContent()).toBe('input: {"start":41}');
    expect(await view.locator('#status').textContent()).toBe('initialized by tack console');
    // The view cannot reach the console's API: its policy allows no connection (the declared origin carried a
    // directive and was dropped).
    await view.locator('#fetch >> text=fetch blocked').waitFor();
    await view.locator('#inc').click();
    const dialog = app.locator('dialog.approval');
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain('mcp__app__increment');
    await shot(app, 'app');
    await app.click('dialog >> text=Allow once');
    await view.locator('#count >> text=count: 42').waitFor();
    // A tool hidden from apps is refused without asking anyone.
    await view.locator('#hidden').click();
    await view.locator('#status >> text=model_only refused').waitFor();
    expect(await view.locator('#status').textContent()).toContain('not visible to apps');
    const html = await fetch((await iframe.getAttribute('src'))!);
    const csp = html.headers.get('content-security-policy')!;
    expect(csp).toContain(`frame-ancestors ${running.origin}`);
    expect(csp).toContain("connect-src 'none'");
    expect(csp).not.toContain('script-src *');
    await app.close();
  });

  it('sessions: the index, a transcript as a timeline with durations, approvals and tokens, and a run live', async () => {
    const page = await open('#/sessions');
    await page.waitForSelector(`[data-testid=sessions-table] >> text=${finishedSession}`);
    await shot(page, 'sessions');
    await page.goto(`${running.url}#/sessions/${finishedSession}`);
    const call = page.locator('[data-testid=tool-call]').first();
    await call.waitFor();
    expect(await call.textContent()).toMatch(/mcp__fixture__echo (\d+ ms|\d+\.\d s)/);
    expect(await call.textContent()).toContain('allow (user)');
    expect(await page.locator('canvas').count()).toBe(1);
    expect(await page.textContent('[data-testid=timeline]')).toContain('end: completed');
    await shot(page, 'session');

    // Each model call is a line; its detail has the parts (new in it, or sent first by an earlier step) and the
    // body rebuilt byte for byte.
    const requests = page.locator('[data-testid=request]');
    expect(await requests.count()).toBe(2);
    expect(await requests.first().textContent()).toMatch(
      /^request step 1 · anthropic:claude-sonnet-4-5 · \d{1,3}(,\d{3})* bytes · answered/,
    );
    const second = requests.nth(1);
    await second.locator('button:text-is("what was sent")').click();
    const rows = second.locator('[data-testid=request-parts] tbody tr');
    await rows.first().waitFor();
    const parts = await rows.allTextContents();
    expect(parts.find((row) => row.includes('tool mcp__fixture__echo'))).toContain('step 1');
    expect(parts.filter((row) => row.includes('new')).length).toBeGreaterThanOrEqual(2);
    expect(await second.locator('[data-testid=request-exact]').textContent()).toContain('byte for byte');
    const body = second.locator('[data-testid=request-body]');
    expect(await body.textContent()).toBe(provider.requests[1]!.body);
    await second.locator('button:text-is("pretty-printed")').click();
    expect(await body.textContent()).toBe(JSON.stringify(JSON.parse(provider.requests[1]!.body), null, 2));
    // The picture starts at the line: the step's usage and the head of its parts.
    await page.evaluate(
      "document.querySelectorAll('[data-testid=request]')[1].scrollIntoView({ block: 'start' })",
    );
    await shot(page, 'session-request');

    // A sub-agent's work is nested under the task call that started it, with its own calls.
    await page.goto(`${running.url}#/sessions/${parentSession}`);
    const work = page.locator('[data-testid=subagent]');
    await work.waitFor();
    const text = (await work.textContent()) ?? '';
    expect(text).toContain('echo from a sub-agent');
    expect(text).toMatch(/completed after 2 steps/);
    expect(text).toMatch(/mcp__fixture__echo (\d+ ms|\d+\.\d s)/);
    // The sub-agent keeps no transcript of its own (its events are the parent's): no link to a missing page.
    expect(await work.locator('a').count()).toBe(0);
    await shot(page, 'subagent');

    // The second session is waiting for its model: the page follows its transcript until it ends.
    await page.goto(`${running.url}#/sessions/${liveSession}`);
    await page.waitForSelector('[data-testid=live]');
    await page.waitForSelector('[data-testid=timeline] >> text=mcp__fixture__echo');
    expect(await page.textContent('[data-testid=timeline]')).not.toContain('end: completed');
    release();
    await page.waitForSelector('[data-testid=timeline] >> text=end: completed', { timeout: 15_000 });
    await page.close();
  });

  it('sessions: one whose process died without writing its end is abandoned, not live', async () => {
    const sessionsDir = join(config.paths.stateDir, 'sessions');
    const files = () =>
      readdirSync(sessionsDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
    const before = new Set(files());
    const chat = ptyTack(['chat', '--plain', '--model', 'anthropic:claude-sonnet-4-5'], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      onStart: (kill) => cleanups.push(kill),
    });
    await chat.waitFor('> ');
    const file = files().find((f) => !before.has(f))!;
    const start = JSON.parse(readFileSync(join(sessionsDir, file), 'utf8').split('\n')[0]!) as {
      sessionId: string;
      pid: number;
    };
    // SIGKILL: nothing can write an end (every other way out does: test/agent/session-end.test.ts).
    process.kill(start.pid, 'SIGKILL');
    await chat.exited();
    const page = await open('#/sessions');
    const row = page.locator('[data-testid=sessions-table] tr', { hasText: start.sessionId });
    await row.waitFor();
    expect(await row.textContent()).toContain('abandoned');
    await page.goto(`${running.url}#/sessions/${start.sessionId}`);
    await page.waitForSelector('[data-testid=abandoned]');
    expect(await page.locator('[data-testid=live]').count()).toBe(0);
    expect(await page.textContent('main')).toContain('abandoned');
    await page.close();
  });

  it('security: held definitions with their diff, accepted in the page (the store records it), audit filters', async () => {
    // A second change to hold: the fixture server is restarted on the variant file's third version.
    writeFileSync(join(p.dir, 'variant.txt'), 'Third version.');
    await running.host.restart('app');
    const page = await open('#/security');
    const held = page.locator('[data-testid=held]', { hasText: 'show_counter' });
    await held.waitFor();
    expect(await held.locator('.diff').textContent()).toContain('+');
    expect(await held.textContent()).toContain('Third version.');
    expect(await page.textContent('[data-testid=trust]')).toContain('is trusted for this run only');
    await page.fill('input[aria-label=tool]', 'no-such-tool');
    await page.waitForSelector('[data-testid=audit-empty] >> text=No audited call matches these filters.');
    await page.fill('input[aria-label=tool]', '');
    await page.selectOption('select[aria-label=outcome]', 'denied');
    await expect.poll(() => page.locator('[data-testid=audit] tbody tr').count()).toBe(1);
    await shot(page, 'security');
    await held.locator('button').click();
    await page.waitForSelector('[role=status] >> text=accepted tool show_counter');
    await held.waitFor({ state: 'detached' });
    // The tool whose description tells the model to ignore its instructions stays held (a high scan finding).
    expect(await page.textContent('main')).toContain('markup');
    const store = TackStore.open(config.paths.storeFile);
    const record = (await store.pins.list()).find((r) => r.name === 'show_counter')!;
    store.close();
    expect(record.pending).toBeUndefined();
    expect(JSON.parse(record.definition).description).toContain('Third version.');
    await page.close();
  });

  it('knowledge: the link graph by trust tier, a concept with its provenance, an attested computation run', async () => {
    const page = await open('#/knowledge/shop/computations/revenue-year-sqlite');
    await page.waitForSelector('[data-testid=graph][data-drawn=yes]');
    // Labels are laid out: some shown, none over another (test/console/rules.test.ts), the rest on hover.
    await page.waitForSelector('[data-labels-shown]');
    expect(Number(await page.getAttribute('[data-labels-shown]', 'data-labels-shown'))).toBeGreaterThan(2);
    // Cytoscape's own stylesheet would be an inline <style>: the page has none, and nothing was refused.
    expect(await page.locator('style').count()).toBe(0);
    expect(cspViolations).toEqual([]);
    expect(await page.textContent('[data-testid=bundle-summary]')).toMatch(/\d+ concepts, \d+ links/);
    const concept = page.locator('[data-testid=concept]');
    await concept.waitFor();
    expect(await concept.textContent()).toContain('Revenue for a year');
    expect(await concept.textContent()).toContain('human:mreyes');
    expect(await concept.textContent()).toContain('human-reviewed');
    await shot(page, 'knowledge');
    const computation = page
      .locator('[data-testid=computation]', { hasText: 'Revenue for a year' })
      .filter({ hasText: 'sqlite' });
    await computation.locator('input').fill('2025');
    await computation.locator('button').click();
    await computation.locator('text=executed_sql').waitFor();
    expect(await computation.textContent()).toContain('"status": "attested"');
    await shot(page, 'computation');
    await page.close();
  });

  it('skills: the tier-1 index and its cost, a skill body, its files and validation findings', async () => {
    const page = await open('#/skills');
    await page.waitForSelector('[data-testid=skills-index-cost]');
    expect(await page.textContent('[data-testid=skills-index-cost]')).toMatch(/costs \d+ tokens every turn/);
    await shot(page, 'skills');
    // An invalid skill is listed apart, with the validator's reason, and its page shows the error.
    expect(await page.textContent('[data-testid=skills-table]')).not.toContain('description-length');
    expect(await page.textContent('[data-testid=skills-invalid]')).toContain(
      'Description exceeds 1024 character limit (1068 chars)',
    );
    await page.click('text=missing-reference');
    await page.waitForSelector('[data-testid=skill-body]');
    expect(await page.textContent('[data-testid=skill-issues]')).toContain('warning');
    await page.goBack();
    await page.click('[data-testid=skills-invalid] >> text=description-length');
    await page.waitForSelector('[data-testid=skill-issues]');
    expect(await page.textContent('[data-testid=skill-issues]')).toContain('error: Description exceeds 1024');
    await page.close();
  });

  it('skills: the poisoning scan as a badge in the list, and its findings with file and line on the page', async () => {
    const page = await open('#/skills');
    await page.waitForSelector('[data-testid=skills-table]');
    const row = (name: string) => page.locator('[data-testid=skills-table] tr', { hasText: name });
    expect(await row('exfil-step').textContent()).toContain('held by the poisoning scan');
    expect(await row('https-installer').textContent()).toContain('poisoning scan: warn');
    expect(await row('missing-reference').textContent()).not.toContain('poisoning');
    await page.click('text=exfil-step');
    await page.waitForSelector('[data-testid=skill-scan-findings]');
    expect(await page.textContent('[data-testid=skill-scan-findings]')).toContain(
      'exfil-step/SKILL.md:9: high exfiltration',
    );
    expect(await page.textContent('[data-testid=skill-body]')).toContain("Skill 'exfil-step' is held");
    await shot(page, 'skill-held');
    await page.close();
  });
});

describe('tack console: the first look', () => {
  it('the examples project: its Knowledge page draws the weather bundle; skill descriptions are cut at a word', async () => {
    // The examples' own configuration, without starting its servers (the pages tested here need none).
    const examples = await resolveProjectTrust(loadConfig({ cwd: join(REPO, 'examples'), env: p.env }), {
      trustProject: true,
    });
    const consoleOf = await startConsole({ config: { ...examples, servers: [] } });
    cleanups.push(() => consoleOf.close());
    const page = await open('#/knowledge', consoleOf.url);
    await page.waitForSelector('text=weather');
    await page.goto(`${consoleOf.url}#/knowledge/weather/metrics/wind`);
    await page.waitForSelector('[data-testid=graph][data-drawn=yes]');
    expect(await page.textContent('[data-testid=bundle-summary]')).toMatch(/\d+ concepts, \d+ links/);
    expect(await page.textContent('[data-testid=concept]')).toContain('blowing from the west');
    await page.waitForSelector('[data-labels-shown]');

    await page.goto(`${consoleOf.url}#/skills`);
    await page.waitForSelector('[data-testid=skill-description]');
    const cells = await page.locator('[data-testid=skill-description][title]').all();
    expect(cells.length).toBeGreaterThan(0);
    for (const cell of cells) {
      const shown = (await cell.textContent())!;
      const full = (await cell.getAttribute('title'))!;
      expect(shown.endsWith('…')).toBe(true);
      const kept = shown.slice(0, -1);
      expect(full.startsWith(kept)).toBe(true);
      // Cut where a word ends: the full text goes on with a space or punctuation there.
      expect(full.slice(kept.length)).toMatch(/^[\s,.;:)–—-]/);
    }
    expect(cspViolations).toEqual([]);
    await page.close();
  });

  it('an empty project: trust and the audit log say so in words', async () => {
    const empty = tempProject('tack-console-empty-');
    cleanups.push(() => empty[Symbol.dispose]());
    const emptyConfig = await resolveProjectTrust(empty.load(), { env: {} });
    const consoleOf = await startConsole({ config: emptyConfig });
    cleanups.push(() => consoleOf.close());
    const page = await open('#/security', consoleOf.url);
    await page.waitForSelector('[data-testid=trust]');
    expect(await page.textContent('[data-testid=trust]')).toContain('Nothing to trust');
    expect(await page.textContent('[data-testid=trust]')).not.toContain('(nothing)');
    expect(await page.textContent('[data-testid=audit-empty]')).toContain('No calls audited yet');
    expect(await page.locator('[data-testid=audit]').count()).toBe(0);
    expect(cspViolations).toEqual([]);
    await page.close();
  });
});
