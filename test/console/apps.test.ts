import { createServer, request, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import type { BrowserContext, FrameLocator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveProjectTrust } from '../../src/config/apply-trust.js';
import { type RunningConsole, startConsole } from '../../src/console/server.js';
import { launchChromium } from '../helpers/browser.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * The console as an MCP Apps host (SEP-1865, 2026-01-26), in Debian's Chromium, against a real MCP Apps server
 * (test/fixtures/servers/apps-probe-server.ts, on the official SDK) whose view sends every request a view may
 * send and probes what it must not reach. The view runs behind the sandbox proxy on the console's second origin.
 */

/** The official MCP Apps example server (`@modelcontextprotocol/server-basic-vanillajs`, a devDependency): its
 * package exports only dist/server.js; dist/index.js next to it is its bin, which takes `--stdio`. */
const BASIC = join(
  dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-basic-vanillajs')),
  'index.js',
);

let p: TempProject;
let running: RunningConsole;
let browser: BrowserContext & AsyncDisposable;
let landing: Server;
let landingUrl: string;
const cleanups: Array<() => unknown> = [];

beforeAll(async () => {
  p = tempProject('tack-apps-');
  cleanups.push(() => p[Symbol.dispose]());
  p.write('tack.json', {
    mcpServers: {
      probe: fixtureEntry('apps-probe-server.js'),
      fixture: fixtureEntry('stdio-server.js'),
      basic: { command: process.execPath, args: [BASIC, '--stdio'] },
    },
  });
  const config = await resolveProjectTrust(p.load(), { trustProject: true });
  // Where the view's http link leads: a page on this machine, since the network is closed.
  landing = createServer((_req, res) => res.end('landing'));
  await new Promise<void>((resolve) => landing.listen(0, '127.0.0.1', resolve));
  cleanups.push(() => new Promise<void>((resolve) => landing.close(() => resolve())));
  landingUrl = `http://127.0.0.1:${(landing.address() as AddressInfo).port}/landing`;
  running = await startConsole({ config });
  cleanups.push(() => running.close());
  browser = await launchChromium();
  cleanups.push(() => browser[Symbol.asyncDispose]());
  // The console connects its servers in the background: the tests start once the probe's tools are listed.
  for (let i = 0; ; i++) {
    const tools = await fetch(`${running.origin}/api/tools`, {
      headers: { authorization: `Bearer ${running.token}` },
    });
    const listed = await tools.text();
    if (listed.includes('mcp__probe__probe') && listed.includes('mcp__basic__get-time')) break;
    if (i === 300) throw new Error('the probe and basic servers never listed their tools');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 60_000);

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

async function open(hash: string): Promise<Page> {
  const page = await browser.newPage();
  // A step that never comes fails with its locator named, well inside the test's own time.
  page.setDefaultTimeout(10_000);
  page.on('pageerror', (error) => {
    throw error;
  });
  await page.goto(`${running.url}${hash}`);
  return page;
}

/** The status of a GET sent exactly with these headers. */
function statusOf(url: string, headers: Record<string, string>): Promise<number> {
  return new Promise((resolve, reject) =>
    request(url, { headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    })
      .on('error', reject)
      .end(),
  );
}

/** Clicks a probe button and waits until its answer is in. */
async function press(view: FrameLocator, button: string): Promise<string> {
  const out = view.locator(`#out-${button}`);
  const before = await out.textContent();
  await view.locator(`#${button}`).click();
  await expect.poll(() => out.textContent(), { timeout: 10_000 }).not.toBe(before);
  return (await out.textContent())!;
}

/** Starts a call of the probe tool from its page; the view opens as the call starts. */
async function startProbe(): Promise<{ page: Page; view: FrameLocator }> {
  const page = await open('#/servers/tool/mcp__probe__probe');
  await page.fill('#arg-link', landingUrl);
  await page.fill('#arg-target', `${running.origin}/api/overview`);
  await page.click('button[type=submit]');
  const view = page.frameLocator('[data-testid=app-view] iframe').frameLocator('iframe');
  return { page, view };
}

describe('tack console: MCP Apps host', () => {
  it('runs the view behind a sandbox proxy on another origin, out of reach of the console', async () => {
    const { page, view } = await startProbe();
    // The view has its input while the call waits for the person, and the result once it is allowed.
    await view.locator('#input >> text=input:').waitFor();
    expect(await view.locator('#input').textContent()).toBe(
      `input: ${JSON.stringify({ link: landingUrl, target: `${running.origin}/api/overview` })}`,
    );
    expect(await view.locator('#result').textContent()).toBe('no result');
    await page.click('dialog >> text=Allow once');
    await view.locator('#result >> text=result: {"probed":true}').waitFor();

    const proxy = page.locator('[data-testid=app-view] iframe');
    expect(await proxy.getAttribute('sandbox')).toBe('allow-scripts allow-same-origin');
    const src = (await proxy.getAttribute('src'))!;
    const sandboxOrigin = new URL(src).origin;
    expect(sandboxOrigin).not.toBe(running.origin);
    expect(src).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sandbox\/[A-Za-z0-9_-]+$/);
    // The view's own frame inside the proxy: sandboxed to scripts alone, an opaque origin.
    const inner = page.frameLocator('[data-testid=app-view] iframe').locator('iframe');
    expect(await inner.getAttribute('sandbox')).toBe('allow-scripts');
    expect(await view.locator('#isolation').textContent()).toBe(
      [
        'cookie threw SecurityError',
        'localStorage threw SecurityError',
        'parent DOM threw SecurityError',
        'top DOM threw SecurityError',
        'top location threw SecurityError',
      ].join('; '),
    );
    // Its policy allows only the declared https://api.example.com: the console's API is out of reach.
    await view.locator('#fetch >> text=fetch blocked').waitFor();
    const init = (await view.locator('#init').textContent())!;
    expect(init).toBe(
      'initialized by tack console (2026-01-26); capabilities ' +
        'logging,message,openLinks,sandbox,serverResources,serverTools,updateModelContext; mode inline',
    );
    await page.locator('[data-testid=app-view] pre >> text=info: "probe up"').waitFor();

    // The proxy page: the view's policy, framed by this console only, answered on its own names only.
    const proxyPage = await fetch(src);
    const csp = proxyPage.headers.get('content-security-policy')!;
    expect(csp).toContain('connect-src https://api.example.com');
    expect(csp).toContain(`frame-ancestors ${running.origin}`);
    expect(csp).toContain("frame-src 'none'");
    expect(await statusOf(src, { host: 'evil.example' })).toBe(403);
    expect((await fetch(`${sandboxOrigin}/api/overview`)).status).toBe(404);
    const consoleCsp = (await fetch(running.url)).headers.get('content-security-policy')!;
    expect(consoleCsp).toContain(`frame-src ${sandboxOrigin}`);
    await page.close();
  });

  it('answers each request a view may send: tools, resources, links, messages, context, display modes', async () => {
    const { page, view } = await startProbe();
    await page.click('dialog >> text=Allow once');
    await view.locator('#result >> text=result:').waitFor();

    // tools/call: an app-visible tool of the view's own server, through the approval dialog.
    await view.locator('#call-app').click();
    await page.locator('dialog.approval >> text=mcp__probe__app_only').waitFor();
    await page.click('dialog >> text=Allow once');
    await expect
      .poll(() => view.locator('#out-call-app').textContent())
      .toContain('"structuredContent":{"word":"hi"}');
    expect(await press(view, 'call-model')).toContain('error: -32000 model_only is not visible to apps');
    expect(await press(view, 'call-other')).toBe('error: -32000 server probe has no tool echo');
    expect(await press(view, 'read')).toContain('"text":"probe data"');

    // ui/open-link: javascript: is refused without asking; http asks, and opens only when the person agrees.
    expect(await press(view, 'link-js')).toBe(
      'error: -32602 Invalid URL: only http and https links open, not javascript:',
    );
    expect(await page.locator('[data-testid=app-link-dialog]').count()).toBe(0);
    await view.locator('#link-http').click();
    const linkDialog = page.locator('[data-testid=app-link-dialog]');
    await linkDialog.waitFor();
    expect(await linkDialog.locator('[data-testid=app-question-text]').textContent()).toBe(landingUrl);
    await linkDialog.locator('text=Cancel').click();
    // The person's refusal is an answer the SDK's views read (`isError`), not a JSON-RPC error.
    await expect.poll(() => view.locator('#out-link-http').textContent()).toBe('ok: {"isError":true}');
    const popup = browser.waitForEvent('page');
    await view.locator('#link-http').click();
    await linkDialog.locator('button >> text=Open').click();
    const opened = await popup;
    await opened.waitForLoadState();
    expect(opened.url()).toBe(landingUrl);
    expect(await opened.textContent('body')).toBe('landing');
    await opened.close();
    await expect.poll(() => view.locator('#out-link-http').textContent()).toBe('ok: {}');

    // ui/message: shown to the person; refused, or recorded (the console runs no conversation, and says so).
    await view.locator('#message').click();
    const messageDialog = page.locator('[data-testid=app-message-dialog]');
    expect(await messageDialog.locator('[data-testid=app-question-text]').textContent()).toBe(
      'Please summarise the probe.',
    );
    await messageDialog.locator('text=Refuse').click();
    await expect.poll(() => view.locator('#out-message').textContent()).toBe('ok: {"isError":true}');
    expect(await page.locator('[data-testid=app-messages]').count()).toBe(0);
    await view.locator('#message').click();
    await messageDialog.locator('button >> text=Record').click();
    // Recorded, but not delivered to any model: still `isError` for the view.
    await page.locator('[data-testid=app-messages] pre').waitFor();
    expect(await page.locator('[data-testid=app-messages] pre').textContent()).toBe(
      'Please summarise the probe.',
    );

    // ui/update-model-context: kept and shown.
    expect(await press(view, 'context')).toBe('ok: {}');
    const context = (await page.locator('[data-testid=app-context]').textContent())!;
    expect(context).toContain('the probe says 3');
    expect(context).toContain('"probe": 3');

    // Display modes: fullscreen (the view declared it) switches and tells the view; pip is not offered.
    expect(await press(view, 'fullscreen')).toBe('ok: {"mode":"fullscreen"}');
    expect(await page.locator('[data-testid=app-view]').getAttribute('class')).toContain('fullscreen');
    expect(await view.locator('#host-context').textContent()).toBe('changed: {"displayMode":"fullscreen"}');
    expect(await press(view, 'pip')).toBe('ok: {"mode":"fullscreen"}');
    await page.click('[data-testid=app-view] >> text=Exit full screen');
    await view.locator('#host-context >> text=changed: {"displayMode":"inline"}').waitFor();

    expect(await press(view, 'ping')).toBe('ok: {}');
    expect(await press(view, 'unknown')).toBe(
      'error: -32601 ui/no-such-method is not supported by the tack console',
    );

    // Teardown: the view answers, the frame goes, and its proxy page and API stop answering.
    const src = (await page.locator('[data-testid=app-view] iframe').getAttribute('src'))!;
    const viewId = src.split('/').pop()!;
    // Playwright's own scrolling does not bring the button up while the focus is inside the view's frames
    // (the click lands elsewhere): the page is scrolled to it first.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.getByRole('button', { name: 'Close view' }).click();
    await page.locator('[data-testid=app-closed] >> text=the view answered its teardown').waitFor();
    expect(await page.locator('[data-testid=app-view] iframe').count()).toBe(0);
    expect((await fetch(src)).status).toBe(404);
    const after = await fetch(`${running.origin}/api/apps/${viewId}/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${running.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'app_only', arguments: { word: 'late' } }),
    });
    expect(after.status).toBe(400);
    expect(await after.text()).toContain('no such view');
    await page.close();
  });

  it('tells the view its tool call was cancelled when the person denies it', async () => {
    const { page, view } = await startProbe();
    await view.locator('#input >> text=input:').waitFor();
    await page.click('dialog >> text=Deny');
    await view.locator('#cancelled >> text=cancelled:').waitFor();
    expect(await view.locator('#result').textContent()).toBe('no result');
    await page.close();
  });
});

describe('tack console: the official MCP Apps example (server-basic-vanillajs) in Chromium', () => {
  it('renders the view built on the official App SDK, which completes its handshake and works through the host', async () => {
    const page = await browser.newPage();
    page.setDefaultTimeout(10_000);
    const errors: string[] = [];
    page.on('pageerror', (error) => errors.push(error.message));
    // The view logs what it is told (its buttons have no other output for messages and links).
    const logged: string[] = [];
    page.on('console', (message) => logged.push(message.text()));
    await page.goto(`${running.url}#/servers/tool/mcp__basic__get-time`);
    await page.click('button[type=submit]');
    const view = page.frameLocator('[data-testid=app-view] iframe').frameLocator('iframe');
    // The handshake gave it the host context: it applied the theme, and waits for the result.
    await expect.poll(() => view.locator('html').getAttribute('data-theme')).toBe('light');
    expect(await view.locator('#server-time').textContent()).toBe('Loading...');
    await page.click('dialog >> text=Allow once');
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    await expect.poll(() => view.locator('#server-time').textContent()).toMatch(iso);
    const first = (await view.locator('#server-time').textContent())!;
    await page.locator(`text=${first}`).first().waitFor();

    // Its button calls get-time back through the host: the console's approval dialog, then the answer.
    await view.locator('#get-time-btn').click();
    await page.locator('dialog.approval >> text=mcp__basic__get-time').waitFor();
    await page.click('dialog >> text=Allow once');
    await expect.poll(() => view.locator('#server-time').textContent()).not.toBe(first);
    expect(await view.locator('#server-time').textContent()).toMatch(iso);

    // A log line is shown under the view.
    await view.locator('#send-log-btn').click();
    await page.locator('[data-testid=app-view] pre >> text=info: "This is log text."').waitFor();

    // A message: asked, recorded, and the view reads the answer (not delivered: isError) without an error.
    await view.locator('#send-message-btn').click();
    const messageDialog = page.locator('[data-testid=app-message-dialog]');
    expect(await messageDialog.locator('[data-testid=app-question-text]').textContent()).toBe(
      'This is message text.',
    );
    await messageDialog.locator('button >> text=Record').click();
    expect(await page.locator('[data-testid=app-messages] pre').textContent()).toBe('This is message text.');
    await expect.poll(() => logged.join('\n')).toContain('Message rejected');

    // A link: refused by the person (the view reads isError), then opened in a new tab.
    await view.locator('#open-link-btn').click();
    const linkDialog = page.locator('[data-testid=app-link-dialog]');
    expect(await linkDialog.locator('[data-testid=app-question-text]').textContent()).toBe(
      'https://modelcontextprotocol.io/',
    );
    await linkDialog.locator('text=Cancel').click();
    await expect.poll(() => logged.join('\n')).toContain('Open link request rejected');
    await view.locator('#link-url').fill(landingUrl);
    const popup = browser.waitForEvent('page');
    await view.locator('#open-link-btn').click();
    await linkDialog.locator('button >> text=Open').click();
    const opened = await popup;
    await opened.waitForLoadState();
    expect(opened.url()).toBe(landingUrl);
    await opened.close();
    await expect.poll(() => logged.join('\n')).toContain('Open link request accepted');

    // Teardown: the official view answers it.
    await page.evaluate('window.scrollTo(0, 0)');
    await page.getByRole('button', { name: 'Close view' }).click();
    await page.locator('[data-testid=app-closed] >> text=the view answered its teardown').waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });
});
