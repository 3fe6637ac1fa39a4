import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import type { AgentEvent } from '../src/agent/events.js';
import { Transcript } from '../src/agent/transcript.js';
import { loadConfig, type TackConfig } from '../src/config/load.js';
import { startConsole } from '../src/console/server.js';
import { TackStore } from '../src/store/store.js';
import { launchChromium } from '../test/helpers/browser.js';
import { writeBundle } from './knowledge.js';
import { isMain, log, median, repoRoot, round, tempDir } from './util.js';

/**
 * `tack console`: how long it takes to open on the example project, and how the pages hold up with 10,000 tools
 * (10 stdio servers of 1,000), 1,000 sessions (written by the harness's Transcript class, 10 steps each, indexed
 * in the store) and a 10,000-concept bundle (bench/knowledge.ts's generator). Two figures per page, median of
 * RUNS: the API answer the page waits for (fetched from Node, token and all), and the page render in Debian's
 * Chromium driven by Playwright (from the hash change to the page's content being there: fetch, parse, render,
 * charts and the graph drawn). Catalog views are computed once per catalog (token counts, pins, scans): the
 * first one is reported apart (cold, tokenizer loaded), the pages are measured warm.
 */
const RUNS = 5;
const SERVERS = 10;
const TOOLS_PER_SERVER = 1000;
const SESSIONS = 1000;
const CONCEPTS = 10_000;

interface PageFigure {
  apiMs: number;
  renderMs: number;
}

async function timeRender(page: Page, hash: string, ready: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    // Another page first, so the hash change really mounts the page measured.
    await page.evaluate(() => {
      (globalThis as unknown as { location: { hash: string } }).location.hash = '#/nowhere';
    });
    await page.waitForSelector('main');
    const started = performance.now();
    await page.evaluate((h) => {
      (globalThis as unknown as { location: { hash: string } }).location.hash = h;
    }, hash);
    await page.waitForSelector(ready);
    samples.push(performance.now() - started);
  }
  return round(median(samples));
}

async function timeApi(origin: string, token: string, path: string): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const response = await fetch(`${origin}/api${path}`, { headers: { authorization: `Bearer ${token}` } });
    await response.arrayBuffer();
    if (!response.ok) throw new Error(`${path}: ${response.status}`);
    samples.push(performance.now() - started);
  }
  return round(median(samples));
}

/**
 * The example project: from starting the console to the servers page shown (open), and to its tools listed (the
 * servers connect meanwhile: the docs server is a second tack process, so that part is the servers' start).
 */
async function exampleProject() {
  const config = loadConfig({
    configFile: join(repoRoot, 'examples/tack.json'),
    cwd: join(repoRoot, 'examples'),
  });
  await using browser = await launchChromium();
  const page = await browser.newPage();
  const opens: number[] = [];
  const listed: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const started = performance.now();
    const running = await startConsole({ config });
    await page.goto(running.url);
    await page.waitForSelector('[data-testid=servers-table] tbody tr');
    opens.push(performance.now() - started);
    await page.waitForSelector('[data-testid=tools-table] tbody tr');
    listed.push(performance.now() - started);
    await running.close();
  }
  return {
    description:
      'examples/tack.json (3 stdio servers, 10 skills): startConsole, page load in Chromium, the servers page shown (open); then its tools listed once servers connected; median of RUNS (era cache warm; the first run loads the tokenizer)',
    firstOpenMs: round(opens[0]!),
    openMs: round(median(opens)),
    toolsListedMs: round(median(listed)),
  };
}

function sessionEvents(i: number): AgentEvent[] {
  const usage = (n: number) => ({
    inputTokens: 1000 * n,
    outputTokens: 100 * n,
    cachedInputTokens: 0,
    costUsd: 0.003 * n,
  });
  const events: AgentEvent[] = [
    {
      type: 'message',
      message: { role: 'user', content: `Task ${i}: summarise the open issues of project ${i % 37}.` },
    },
  ];
  for (let step = 1; step <= 10; step++) {
    const callId = `call-${i}-${step}`;
    events.push(
      { type: 'step-start', step, tools: 12 },
      {
        type: 'message',
        message: { role: 'assistant', content: [{ type: 'text', text: `Looking at page ${step}.` }] },
      },
      {
        type: 'tool-call',
        step,
        callId,
        name: 'mcp__t0__t0_list_get_1',
        arguments: { id: `${step}` },
        server: 't0',
      },
      {
        type: 'approval',
        callId,
        name: 'mcp__t0__t0_list_get_1',
        decision: 'allow',
        by: 'user',
        reason: 'approved once',
      },
      {
        type: 'tool-result',
        callId,
        name: 'mcp__t0__t0_list_get_1',
        isError: false,
        text: `result ${step} `.repeat(40),
        durationMs: 20 + step,
      },
      { type: 'usage', step, stepUsage: usage(1), total: usage(step) },
    );
  }
  events.push({
    type: 'session-end',
    reason: 'completed',
    detail: 'answered',
    answer: 'Done.',
    total: usage(10),
    steps: 10,
  });
  return events;
}

/** 10,000 tools, 1,000 sessions and a 10,000-concept bundle. */
async function large() {
  const tmp = tempDir('console');
  try {
    const home = join(tmp.dir, 'home');
    const bundle = join(tmp.dir, 'bundle');
    mkdirSync(bundle);
    writeBundle(bundle, CONCEPTS);
    const server = join(repoRoot, 'dist/bench/fixtures/many-tools-server.js');
    const mcpServers = Object.fromEntries(
      Array.from({ length: SERVERS }, (_, i) => [
        `t${i}`,
        {
          command: process.execPath,
          args: [server, '--tools', String(TOOLS_PER_SERVER), '--prefix', `t${i}`],
        },
      ]),
    );
    writeFileSync(
      join(tmp.dir, 'tack.json'),
      JSON.stringify({ mcpServers, knowledge: { bundles: [bundle] } }),
    );
    const env = { ...process.env, TACK_HOME: home, TACK_TRUST_PROJECT: '1' };
    const config: TackConfig = loadConfig({ cwd: tmp.dir, env });
    log(`console: writing ${SESSIONS} sessions`);
    const store = TackStore.open(config.paths.storeFile);
    let sessionId = '';
    for (let i = 0; i < SESSIONS; i++) {
      const transcript = Transcript.create({
        dir: join(config.paths.stateDir, 'sessions'),
        index: store.sessions,
      });
      transcript.append({
        type: 'session-start',
        sessionId: transcript.sessionId,
        model: 'anthropic:claude-sonnet-4-5',
        cwd: tmp.dir,
        guidelinesHash: 'x',
        guidelinesSources: [],
      });
      for (const event of sessionEvents(i)) transcript.append(event);
      transcript.close();
      sessionId = transcript.sessionId;
    }
    store.close();

    const started = performance.now();
    const running = await startConsole({ config });
    try {
      await running.host.connectAll();
      const connectedMs = performance.now() - started;
      const catalogStarted = performance.now();
      await timeApi(running.origin, running.token, '/servers');
      const firstCatalogMs = performance.now() - catalogStarted;
      log(
        `console: ${running.host.catalog.tools.length} tools connected in ${round(connectedMs)} ms, first catalog view ${round(firstCatalogMs)} ms`,
      );
      const kbStarted = performance.now();
      await timeApi(running.origin, running.token, '/knowledge');
      const firstKnowledgeMs = performance.now() - kbStarted;

      await using browser = await launchChromium();
      const page = await browser.newPage();
      await page.goto(running.url);
      await page.waitForSelector('[data-testid=tools-table] tbody tr');
      const { origin, token } = running;
      const concept = (
        (await (
          await fetch(`${origin}/api/knowledge/bundle/search?q=`, {
            headers: { authorization: `Bearer ${token}` },
          })
        ).json()) as Array<{ id: string }>
      )[0]!.id;
      const tool = running.host.catalog.tools[0]!.name;
      const pages: Record<string, PageFigure & { api: string }> = {};
      const measure = async (name: string, api: string, hash: string, ready: string) => {
        pages[name] = {
          api,
          apiMs: await timeApi(origin, token, api),
          renderMs: await timeRender(page, hash, ready),
        };
        log(`console ${name}: api ${pages[name]!.apiMs} ms, render ${pages[name]!.renderMs} ms`);
      };
      await measure('servers', '/servers', '#/servers', '[data-testid=tools-table] tbody tr');
      await measure('tool', `/tools/${tool}`, `#/servers/tool/${tool}`, '.schema-form');
      await measure('sessions', '/sessions', '#/sessions', '[data-testid=sessions-table] tbody tr');
      await measure(
        'session',
        `/sessions/${sessionId}`,
        `#/sessions/${sessionId}`,
        '[data-testid=timeline] .item',
      );
      await measure('security', '/security', '#/security', '[data-testid=audit]');
      await measure(
        'knowledge',
        '/knowledge/bundle/graph',
        '#/knowledge/bundle',
        '[data-testid=graph][data-drawn=yes]',
      );
      await measure(
        'concept',
        `/knowledge/bundle/concept?id=${encodeURIComponent(concept)}`,
        `#/knowledge/bundle/${encodeURIComponent(concept)}`,
        '[data-testid=concept]',
      );
      return {
        description: `${SERVERS} stdio servers of ${TOOLS_PER_SERVER} tools, ${SESSIONS} sessions of 10 steps (Transcript class, store index), a ${CONCEPTS}-concept bundle (graph: the ${300} concepts around the best-linked one); median of ${RUNS} per page: API answer fetched from Node, render from the hash change to the page's content in Chromium`,
        tools: running.host.catalog.tools.length,
        connectMs: round(connectedMs),
        firstCatalogViewMs: round(firstCatalogMs),
        firstKnowledgeLoadMs: round(firstKnowledgeMs),
        pages,
      };
    } finally {
      await running.close();
    }
  } finally {
    tmp.remove();
  }
}

export async function runConsole() {
  log('console: example project');
  const example = await exampleProject();
  log(
    `console example: open ${example.openMs} ms (first ${example.firstOpenMs} ms), tools listed ${example.toolsListedMs} ms`,
  );
  return { runs: RUNS, example, large: await large() };
}

if (isMain(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(await runConsole(), null, 2)}\n`);
}
