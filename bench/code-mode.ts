import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { resolveModel } from '../src/agent/model.js';
import { AgentSession } from '../src/agent/session.js';
import { DEFAULT_SCRIPT_LIMITS, runScript, warmUp } from '../src/codemode/runtime.js';
import { loadConfig } from '../src/config/load.js';
import { McpHost } from '../src/mcp/host.js';
import { TackStore } from '../src/store/store.js';
import {
  type FakeRequest,
  type FakeTurn,
  providerEnv,
  startFakeProvider,
  toolResults,
} from '../test/helpers/fake-provider.js';
import { fixtures, isMain, log, median, qwen3Tokens, round, tempDir } from './util.js';

/**
 * Code mode against direct calls: the same tool calls, made by the model one step at a time (every result into
 * the context) and by one run_code script (only its output), over real servers (server-filesystem on a generated
 * tree of 1,000 files, server-memory) through a real AgentSession and the local model server, which replays a
 * fixed script for both paths so the tool calls are identical and only the token flow differs. Tokens are counted
 * with tack's tokenizer (Qwen3) on what the model was sent; the fake server's own usage figures are not used.
 * Then the runtime's own costs: sandbox start-up, and a tool call from inside the sandbox against the same call
 * made directly, interleaved.
 */

const requireFrom = createRequire(import.meta.url);
const entry = (pkg: string) => requireFrom.resolve(`@modelcontextprotocol/${pkg}/dist/index.js`);

interface Task {
  name: string;
  /** The steps a model would take calling tools directly (each step's calls in one turn). */
  direct: (root: string, listing: string[]) => FakeTurn[];
  /** The same calls as one script. */
  code: (root: string) => string;
}

const FILES = 200;
const READS = 20;

const tasks: Task[] = [
  {
    name: `list ${FILES} files, read ${READS}, keep the TODO lines`,
    direct: (root, listing) => [
      { toolCalls: [{ name: 'mcp__fs__list_directory', input: { path: `${root}/a` } }] },
      {
        toolCalls: listing.slice(0, READS).map((name) => ({
          name: 'mcp__fs__read_text_file',
          input: { path: `${root}/a/${name}` },
        })),
      },
      { text: 'done' },
    ],
    code: (root) => `
const listing = await mcp.fs.list_directory({ path: ${JSON.stringify(`${root}/a`)} });
const files = listing.content.split('\\n').filter((l) => l.startsWith('[FILE]')).map((l) => l.slice(7));
const hits = [];
for (const name of files.slice(0, ${READS})) {
  const { content } = await mcp.fs.read_text_file({ path: ${JSON.stringify(`${root}/a/`)} + name });
  const todo = content.split('\\n').find((l) => l.startsWith('TODO'));
  if (todo) hits.push(name + ': ' + todo);
}
return hits;`,
  },
  {
    name: 'record 12 facts in server-memory, then search them',
    direct: () => [
      {
        toolCalls: Array.from({ length: 12 }, (_, i) => ({
          name: 'mcp__memory__create_entities',
          input: {
            entities: [
              { name: `service-${i}`, entityType: 'service', observations: [`owned by team ${i % 3}`] },
            ],
          },
        })),
      },
      { toolCalls: [{ name: 'mcp__memory__search_nodes', input: { query: 'team 1' } }] },
      { text: 'done' },
    ],
    code: () => `
for (let i = 0; i < 12; i++)
  await mcp.memory.create_entities({ entities: [{ name: 'service-' + i, entityType: 'service', observations: ['owned by team ' + (i % 3)] }] });
const found = await mcp.memory.search_nodes({ query: 'team 1' });
const text = typeof found === 'string' ? found : JSON.stringify(found);
return (text.match(/service-\\d+/g) ?? []).filter((v, i, a) => a.indexOf(v) === i);`,
  },
  {
    name: 'read one file (a single call)',
    direct: (root, listing) => [
      { toolCalls: [{ name: 'mcp__fs__read_text_file', input: { path: `${root}/a/${listing[0]}` } }] },
      { text: 'done' },
    ],
    code: (root) =>
      `return (await mcp.fs.read_text_file({ path: ${JSON.stringify(`${root}/a/`)} + 'f000.txt' })).content;`,
  },
];

interface PathFigures {
  /** Tokens of the tool results the model was sent (what entered the context). */
  resultTokens: number;
  /** Tokens of the last request: system prompt, tool definitions and the whole history. */
  finalContextTokens: number;
  /** Tokens over every request of the run (each step re-sends the history): the input a provider bills. */
  cumulativeInputTokens: number;
  /**
   * The same input as a provider with prompt caching bills it, in tokens at the base input price: Anthropic's
   * prices (a cache read 0.1x, a cache write 1.25x) and its rule (a request reads the longest prefix an earlier
   * request wrote at a breakpoint, and writes up to its own: tack marks the system prompt and the last message).
   * `cold`: the first request finds nothing cached; `warm`: the tool definitions and system prompt were cached
   * by an earlier run (a session's later task, another session within the cache's lifetime).
   */
  billedInput: { cold: number; warm: number };
  /** Tokens of what every request starts with: the tool definitions and the system prompt. */
  prefixTokens: number;
  steps: number;
  toolCalls: number;
}

/** Anthropic's prices relative to an uncached input token, and the smallest prefix it caches. */
const CACHE_READ = 0.1;
const CACHE_WRITE = 1.25;
const MIN_CACHEABLE = 1_024;

/**
 * A request in the blocks a provider reads it in (tool definitions, system prompt, then each message), each with
 * the tokens of its text; equal JSON means an equal block.
 */
async function requestBlocks(request: FakeRequest): Promise<Array<{ key: string; tokens: number }>> {
  const parts = [
    JSON.stringify(request.tools),
    request.system,
    ...request.messages.map((m) => JSON.stringify(m)),
  ];
  return Promise.all(parts.map(async (key) => ({ key, tokens: await qwen3Tokens(key) })));
}

/** What the run's requests bill with a prompt cache (see PathFigures.billedInput); `seed` is cached beforehand. */
function billed(
  requests: ReadonlyArray<Array<{ key: string; tokens: number }>>,
  seed: ReadonlyArray<string[]>,
): number {
  const cached = new Set(seed.map((keys) => JSON.stringify(keys)));
  let total = 0;
  for (const blocks of requests) {
    const keys = blocks.map((b) => b.key);
    const upTo = (n: number) => blocks.slice(0, n).reduce((sum, b) => sum + b.tokens, 0);
    let read = 0;
    for (let n = blocks.length; n > 0; n--)
      if (cached.has(JSON.stringify(keys.slice(0, n)))) {
        read = upTo(n);
        break;
      }
    const all = upTo(blocks.length);
    if (all < MIN_CACHEABLE) {
      total += all;
      continue;
    }
    total += read * CACHE_READ + (all - read) * CACHE_WRITE;
    // The two breakpoints: the end of the system prompt, and the last message.
    cached.add(JSON.stringify(keys.slice(0, 2)));
    cached.add(JSON.stringify(keys));
  }
  return Math.round(total);
}

async function requestTokens(request: FakeRequest): Promise<number> {
  return qwen3Tokens(
    JSON.stringify({ system: request.system, tools: request.tools, messages: request.messages }),
  );
}

async function runPath(
  host: McpHost,
  config: ReturnType<typeof loadConfig>,
  dir: string,
  turns: FakeTurn[],
  codeMode: boolean,
): Promise<PathFigures> {
  const provider = await startFakeProvider(turns);
  let calls = 0;
  try {
    const session = await AgentSession.create({
      model: resolveModel('anthropic:claude-sonnet-4-5', providerEnv(provider)),
      cwd: dir,
      env: {},
      host,
      config,
      transcript: false,
      maxRetries: 0,
      // The direct path is what a user has without code mode: no run_code, no declarations in the prompt.
      codeMode: { mode: codeMode ? 'on' : 'off' },
      // The fixture server is there for the per-call figures only.
      toolFilter: (name) => !name.startsWith('mcp__cat__'),
      toolConcurrency: 1,
      approvals: { permissions: { allow: ['mcp__fs__*', 'mcp__memory__*'] } },
      onEvent: (e) => {
        if (e.type === 'tool-call' && e.name.startsWith('mcp__')) calls++;
      },
    });
    const result = await session.run('the task');
    if (result.reason !== 'completed')
      throw new Error(`the run ended with ${result.reason}: ${result.detail}`);
    const last = provider.requests.at(-1)!;
    const results = toolResults(last).map((r) => r.content);
    let cumulative = 0;
    for (const request of provider.requests) cumulative += await requestTokens(request);
    const blocks = await Promise.all(provider.requests.map(requestBlocks));
    const prefix = blocks[0]!.slice(0, 2);
    return {
      resultTokens: await qwen3Tokens(results.join('\n')),
      finalContextTokens: await requestTokens(last),
      cumulativeInputTokens: cumulative,
      billedInput: { cold: billed(blocks, []), warm: billed(blocks, [prefix.map((b) => b.key)]) },
      prefixTokens: prefix.reduce((sum, b) => sum + b.tokens, 0),
      steps: provider.requests.length,
      toolCalls: calls,
    };
  } finally {
    await provider.close();
  }
}

export async function runCodeMode(options: { callSamples?: number; startSamples?: number } = {}) {
  const callSamples = options.callSamples ?? 1_000;
  const startSamples = options.startSamples ?? 30;
  const tmp = tempDir('code-mode');
  // 1,000 files in 5 folders; every 7th has a TODO line.
  const tree = join(tmp.dir, 'tree');
  for (const folder of ['a', 'b', 'c', 'd', 'e']) {
    mkdirSync(join(tree, folder), { recursive: true });
    for (let i = 0; i < FILES; i++)
      writeFileSync(
        join(tree, folder, `f${String(i).padStart(3, '0')}.txt`),
        `${Array.from({ length: 40 }, (_, l) => `${folder}/${i} line ${l}: ${'lorem ipsum dolor '.repeat(4)}`).join('\n')}${i % 7 === 0 ? '\nTODO: fix this file' : ''}\n`,
      );
  }
  const project = join(tmp.dir, 'project');
  mkdirSync(project);
  writeFileSync(
    join(project, 'tack.json'),
    JSON.stringify({
      mcpServers: {
        fs: { command: process.execPath, args: [entry('server-filesystem'), tree] },
        memory: {
          command: process.execPath,
          args: [entry('server-memory')],
          env: { MEMORY_FILE_PATH: join(tmp.dir, 'memory.jsonl') },
        },
        cat: { command: process.execPath, args: [fixtures.dual], trusted: true },
      },
    }),
  );
  const env = { TACK_HOME: join(tmp.dir, 'home'), HOME: tmp.dir };
  const config = loadConfig({ cwd: project, env });
  const store = TackStore.open(config.paths.storeFile);
  const host = await McpHost.start({ config, store });
  const listing = Array.from({ length: FILES }, (_, i) => `f${String(i).padStart(3, '0')}.txt`);
  try {
    // Start-up, before any script ran in this process: the first pays the engine's compile; later ones a runtime
    // and a context each.
    const cold = performance.now();
    await warmUp();
    const coldMs = performance.now() - cold;
    const starts: number[] = [];
    for (let i = 0; i < startSamples; i++) {
      const t = performance.now();
      await runScript('return 1', {}, async () => ({ ok: true, value: null }));
      starts.push(performance.now() - t);
    }

    const tokenRows = [];
    for (const task of tasks) {
      // The direct path first, then the script: the memory server's graph is the same size for both (a fresh file
      // would be fairer still; the search's result differs by a few entities at most).
      const direct = await runPath(host, config, project, task.direct(tree, listing), false);
      const code = await runPath(
        host,
        config,
        project,
        [{ toolCalls: [{ name: 'run_code', input: { code: task.code(tree) } }] }, { text: 'done' }],
        true,
      );
      const row = {
        task: task.name,
        direct,
        codeMode: code,
        fewerResultTokensPct: round((1 - code.resultTokens / direct.resultTokens) * 100, 1),
        fewerCumulativeInputTokensPct: round(
          (1 - code.cumulativeInputTokens / direct.cumulativeInputTokens) * 100,
          1,
        ),
        finalContextDelta: code.finalContextTokens - direct.finalContextTokens,
        cumulativeInputDelta: code.cumulativeInputTokens - direct.cumulativeInputTokens,
        fewerBilledInputPct: {
          cold: round((1 - code.billedInput.cold / direct.billedInput.cold) * 100, 1),
          warm: round((1 - code.billedInput.warm / direct.billedInput.warm) * 100, 1),
        },
        billedInputDelta: {
          cold: code.billedInput.cold - direct.billedInput.cold,
          warm: code.billedInput.warm - direct.billedInput.warm,
        },
        /** What code mode adds to every request before the history: its system part and its two tools. */
        fixedTokens: code.prefixTokens - direct.prefixTokens,
      };
      log(
        `${task.name}: results ${direct.resultTokens} -> ${code.resultTokens} tokens; cumulative input ${direct.cumulativeInputTokens} -> ${code.cumulativeInputTokens}; billed cold ${direct.billedInput.cold} -> ${code.billedInput.cold}, warm ${direct.billedInput.warm} -> ${code.billedInput.warm}; fixed ${row.fixedTokens}`,
      );
      tokenRows.push(row);
    }

    // Per call: `echo` of the fixture made N times from Node directly, and N times from one script, blocks
    // interleaved; and the same from a script with a host that answers at once (the sandbox's own cost).
    const echo = 'mcp__cat__echo';
    const blocks = 10;
    const perBlock = Math.max(1, Math.floor(callSamples / blocks));
    const direct: number[] = [];
    const scripted: number[] = [];
    const bare: number[] = [];
    /** Per call of a scripted block, the time outside the host's callTool: the sandbox's own share. */
    const sandboxShare: number[] = [];
    const limits = { ...DEFAULT_SCRIPT_LIMITS, maxCalls: perBlock + 1, cpuMs: 60_000, wallMs: 600_000 };
    const loop = `for (let i = 0; i < ${perBlock}; i++) await mcp.cat.echo({ text: 'x' + i }); return 1;`;
    const binding = { cat: { echo } };
    for (let b = 0; b < blocks; b++) {
      const order = b % 2 === 0 ? ['direct', 'script'] : ['script', 'direct'];
      for (const side of order) {
        const t = performance.now();
        if (side === 'direct') {
          for (let i = 0; i < perBlock; i++) await host.callTool(echo, { text: `x${i}` });
          direct.push((performance.now() - t) / perBlock);
        } else {
          let inHost = 0;
          const outcome = await runScript(
            loop,
            binding,
            async (target, args) => {
              const called = performance.now();
              const result = await host.callTool(target, args as Record<string, unknown>);
              inHost += performance.now() - called;
              return { ok: true, value: result.content };
            },
            limits,
          );
          if (outcome.status !== 'ok') throw new Error(`the script failed: ${outcome.error}`);
          const wall = performance.now() - t;
          scripted.push(wall / perBlock);
          sandboxShare.push((wall - inHost) / perBlock);
        }
      }
      const t = performance.now();
      await runScript(loop, binding, async () => ({ ok: true, value: { content: [] } }), limits);
      bare.push((performance.now() - t) / perBlock);
    }
    const perCall = {
      callsPerSide: perBlock * blocks,
      directMs: round(median(direct), 3),
      fromScriptMs: round(median(scripted), 3),
      overheadMs: round(median(scripted) - median(direct), 3),
      /** The script's wall time less the time inside host.callTool, per call (same calls): what the sandbox adds. */
      sandboxShareMs: round(median(sandboxShare), 3),
      /** A script calling a host that answers at once: the sandbox's round trip alone. */
      sandboxOnlyMs: round(median(bare), 3),
      targetMs: 1,
    };
    log(
      `per call: direct ${perCall.directMs} ms, from a script ${perCall.fromScriptMs} ms, sandbox alone ${perCall.sandboxOnlyMs} ms`,
    );
    return {
      tokenizer: 'qwen3',
      tasks: tokenRows,
      targets: {
        fewerTokensPctOnTenPlusCalls: 60,
        singleCallMaxExtraTokens: 200,
        smallResultTaskFewerInputPct: 50,
      },
      startup: {
        coldMs: round(coldMs, 1),
        warmMedianMs: round(median(starts), 2),
        samples: startSamples,
        targetMs: 50,
      },
      perCall,
    };
  } finally {
    await host.close();
    store.close();
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  const result = await runCodeMode();
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}
