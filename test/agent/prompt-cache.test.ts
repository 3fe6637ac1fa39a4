import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Usage } from '../../src/agent/events.js';
import { prefixHash } from '../../src/agent/prompt-cache.js';
import type { AgentTool } from '../../src/agent/toolset.js';
import { readTranscript } from '../../src/agent/transcript.js';
import {
  CACHE_SESSION_STEPS,
  cacheSessionCommand,
  cacheSessionTurn,
  examplesConfig,
  jsonEvents,
  type SessionEvent,
} from '../helpers/cache-session.js';
import { tack, tackPiped } from '../helpers/cli.js';
import { type FakeProvider, type FakeRequest, providerEnv, toolResults } from '../helpers/fake-provider.js';
import { REPO } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

type Json = Record<string, unknown>;

/** Every `cache_control` mark in a request body, by where it sits. */
function breakpoints(raw: unknown): string[] {
  const body = raw as { tools?: Json[]; system?: Json[]; messages?: Array<{ content: unknown }> };
  const out: string[] = [];
  for (const [i, t] of (body.tools ?? []).entries()) if (t.cache_control) out.push(`tool ${i}`);
  for (const [i, b] of (body.system ?? []).entries()) if (b.cache_control) out.push(`system ${i}`);
  for (const [i, m] of (body.messages ?? []).entries()) {
    if (!Array.isArray(m.content)) continue;
    for (const [j, b] of (m.content as Json[]).entries()) if (b.cache_control) out.push(`message ${i}.${j}`);
  }
  return out;
}

async function runCacheSession(
  provider: FakeProvider,
  model: string,
  env: Record<string, string | undefined>,
) {
  const { args, cwd } = cacheSessionCommand(REPO, model);
  const run = await tack(args, { cwd, env: { ...env, ...providerEnv(provider) } });
  return { ...run, events: jsonEvents(run.stdout) };
}

function usages(events: SessionEvent[]): Usage[] {
  return events.filter((e) => e.type === 'usage').map((e) => e.stepUsage as Usage);
}

/** The ten-step session through the binary, with `model`; it must complete with one request per step. */
async function session(model: string) {
  const p = scope.project('tack-cache-');
  const provider = await scope.fake((request) => cacheSessionTurn(request));
  const run = await runCacheSession(provider, model, p.env);
  expect(run.code, run.stderr).toBe(0);
  expect(provider.requests).toHaveLength(CACHE_SESSION_STEPS);
  return { p, provider, run };
}

describe('prompt caching', () => {
  it('marks the stable prefix and the last turn on Anthropic, reads the cache back and prices it', async () => {
    const { p, provider, run } = await session('anthropic:claude-sonnet-4-5');

    // The request bodies: the end of the system prompt (after the tools) and the last message are marked, in
    // every request, with the type Anthropic takes; nothing else, so well under Anthropic's four.
    for (const [i, request] of provider.requests.entries()) {
      const raw = request.raw as { system: Json[]; messages: unknown[] };
      const last = raw.messages.length - 1;
      const lastBlock = (raw.messages[last] as { content: unknown[] }).content.length - 1;
      expect(breakpoints(raw), `request ${i + 1}`).toEqual([
        `system ${raw.system.length - 1}`,
        `message ${last}.${lastBlock}`,
      ]);
      expect(raw.system.at(-1)!.cache_control).toEqual({ type: 'ephemeral' });
    }

    // The prefix before the history is byte-stable: one hash for all ten steps, in the transcript.
    const dir = join(p.home, 'state', 'sessions');
    const files = existsSync(dir)
      ? readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'))
      : [];
    expect(files).toHaveLength(1);
    const { events } = readTranscript(join(dir, files[0]!));
    const hashes = events.flatMap((e) => (e.type === 'step-start' ? [e.prefixHash] : []));
    expect(hashes).toHaveLength(CACHE_SESSION_STEPS);
    expect(hashes[0]).toMatch(/^[0-9a-f]{16}$/);
    expect(new Set(hashes).size).toBe(1);
    // The marks are the request's alone: the history the transcript keeps (and a resume sends) has none.
    expect(JSON.stringify(events.filter((e) => e.type === 'message'))).not.toContain('cacheControl');

    // Usage as the provider reported it: steps 2-10 read at least 80 % of their input from the cache.
    const steps = usages(run.events);
    expect(steps).toHaveLength(CACHE_SESSION_STEPS);
    const reported = provider.requests.map((r) => r.usage!);
    steps.forEach((u, i) => {
      const wire = reported[i]!;
      expect(u, `step ${i + 1}`).toMatchObject({
        inputTokens: wire.input + wire.cacheRead + wire.cacheWrite,
        cachedInputTokens: wire.cacheRead,
        outputTokens: wire.output,
      });
      expect(u.cacheWriteTokens ?? 0).toBe(wire.cacheWrite);
    });
    expect(steps[0]!.cachedInputTokens).toBe(0);
    expect(steps[0]!.cacheWriteTokens).toBeGreaterThan(0);
    const later = steps.slice(1);
    const share =
      later.reduce((sum, u) => sum + u.cachedInputTokens, 0) /
      later.reduce((sum, u) => sum + u.inputTokens, 0);
    expect(share).toBeGreaterThanOrEqual(0.8);

    // The cost is Anthropic's prices for Claude Sonnet 4.5 (USD per million: input 3, cache write 3.75, cache
    // read 0.3, output 15) applied to what it reported, step by step and in total.
    const price = (w: NonNullable<FakeRequest['usage']>) =>
      (w.input * 3 + w.cacheWrite * 3.75 + w.cacheRead * 0.3 + w.output * 15) / 1_000_000;
    for (const [i, u] of steps.entries())
      expect(u.costUsd, `step ${i + 1}`).toBeCloseTo(price(reported[i]!), 12);
    const end = run.events.at(-1) as { type: string; total: Usage };
    expect(end.type).toBe('session-end');
    const billed = reported.reduce((sum, w) => sum + price(w), 0);
    expect(end.total.costUsd).toBeCloseTo(billed, 12);
    expect(end.total.cachedInputTokens).toBe(reported.reduce((sum, w) => sum + w.cacheRead, 0));
    expect(end.total.cacheWriteTokens).toBe(reported.reduce((sum, w) => sum + w.cacheWrite, 0));
  }, 120_000);

  it('/cost in the chat says what the cache served and took, priced as the provider bills it', async () => {
    const p = scope.project('tack-cache-');
    const provider = await scope.fake([{ text: 'First answer.' }, { text: 'Second answer.' }]);
    const run = await tackPiped(
      ['chat', '--plain', ...examplesConfig(REPO), '--model', 'anthropic:claude-sonnet-4-5'],
      'What is the weather like?\nAnd tomorrow?\n/cost\n',
      { cwd: join(REPO, 'examples'), env: { ...p.env, ...providerEnv(provider) }, defer: scope.defer },
    );
    expect(run.code, run.stderr).toBe(0);
    expect(provider.requests).toHaveLength(2);
    const line = run.stdout.trim().split('\n').at(-1)!;
    const figures =
      /^(\d+) input tokens \((\d+) cached, (\d+) written to the cache\), (\d+) output, \$(\d+\.\d{4})$/.exec(
        line,
      );
    expect(figures, line).not.toBeNull();
    const [input, read, written, output] = figures!.slice(1, 5).map(Number) as [
      number,
      number,
      number,
      number,
    ];
    const reported = provider.requests.map((r) => r.usage!);
    const sum = (f: (w: (typeof reported)[number]) => number) => reported.reduce((s, w) => s + f(w), 0);
    expect(read).toBe(sum((w) => w.cacheRead));
    expect(read).toBeGreaterThan(0);
    expect(written).toBe(sum((w) => w.cacheWrite));
    expect(input).toBe(sum((w) => w.input + w.cacheRead + w.cacheWrite));
    expect(output).toBe(sum((w) => w.output));
    const billed = sum((w) => w.input * 3 + w.cacheWrite * 3.75 + w.cacheRead * 0.3 + w.output * 15) / 1e6;
    expect(figures![5]).toBe(billed.toFixed(4));
  }, 60_000);

  it("tack run's last line counts the input tokens the cache served", async () => {
    const p = scope.project('tack-cache-');
    const provider = await scope.fake((request) =>
      toolResults(request).length === 0
        ? { toolCalls: [{ name: 'mcp__weather__list_cities', input: {} }] }
        : { text: 'Three cities.' },
    );
    const run = await tack(
      [
        'run',
        'Which cities?',
        ...examplesConfig(REPO),
        '--model',
        'anthropic:claude-sonnet-4-5',
        '--approve',
        'auto-read-only',
      ],
      { cwd: join(REPO, 'examples'), env: { ...p.env, ...providerEnv(provider) } },
    );
    expect(run.code, run.stderr).toBe(0);
    const read = provider.requests.reduce((sum, r) => sum + r.usage!.cacheRead, 0);
    expect(read).toBeGreaterThan(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `\\[completed\\] answered after 2 steps; \\d+ in \\(${read} cached\\) / \\d+ out tokens, \\$\\d+\\.\\d{4}`,
      ),
    );
  }, 60_000);

  it('sends no breakpoint on OpenAI and reads its cached tokens back', async () => {
    const { provider, run } = await session('openai:gpt-4.1');
    for (const request of provider.requests)
      expect(JSON.stringify(request.raw)).not.toContain('cache_control');
    const hashes = run.events.flatMap((e) => (e.type === 'step-start' ? [e.prefixHash] : []));
    expect(new Set(hashes).size).toBe(1);
    const steps = usages(run.events);
    const reported = provider.requests.map((r) => r.usage!);
    steps.forEach((u, i) => {
      expect(u).toMatchObject({ inputTokens: reported[i]!.input, cachedInputTokens: reported[i]!.cacheRead });
      expect(u.cacheWriteTokens).toBeUndefined();
      // gpt-4.1: input 2, cached input 0.5, output 8.
      const w = reported[i]!;
      expect(u.costUsd).toBeCloseTo(
        ((w.input - w.cacheRead) * 2 + w.cacheRead * 0.5 + w.output * 8) / 1e6,
        12,
      );
    });
    expect(steps.slice(1).every((u) => u.cachedInputTokens > 0)).toBe(true);
  }, 120_000);

  it('the fake provider caches only a prefix whose bytes match, up to a breakpoint, and says so as Anthropic does', async () => {
    const provider = await scope.fake(() => ({ text: 'ok' }));
    const long = 'Stable rules. '.repeat(400); // ~1,400 tokens at 4 characters a token
    const post = async (system: string, mark: boolean) => {
      const response = await fetch(`${provider.url}/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'test', 'content-type': 'application/json' },
        body: JSON.stringify({
          model: 'claude-sonnet-4-5',
          max_tokens: 100,
          stream: true,
          system: [{ type: 'text', text: system, ...(mark ? { cache_control: { type: 'ephemeral' } } : {}) }],
          messages: [{ role: 'user', content: 'hi' }],
        }),
      });
      const events = (await response.text())
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map(
          (line) => JSON.parse(line.slice(6)) as { type: string; message?: { usage: Json }; usage?: Json },
        );
      return {
        start: events.find((e) => e.type === 'message_start')!.message!.usage,
        delta: events.find((e) => e.type === 'message_delta')!.usage!,
      };
    };
    const unmarked = await post(long, false);
    expect(unmarked.start).toMatchObject({ cache_creation_input_tokens: 0, cache_read_input_tokens: 0 });
    const first = await post(long, true);
    expect(first.start.cache_read_input_tokens).toBe(0);
    expect(first.start.cache_creation_input_tokens).toBe(Math.ceil(long.length / 4));
    const again = await post(long, true);
    expect(again.start.cache_read_input_tokens).toBe(Math.ceil(long.length / 4));
    expect(again.start.cache_creation_input_tokens).toBe(0);
    // The final figures come again in message_delta, as the API sends them.
    expect(again.delta).toMatchObject({
      cache_read_input_tokens: again.start.cache_read_input_tokens,
      input_tokens: again.start.input_tokens,
    });
    // One character changed: nothing to read, all to write again.
    const changed = await post(`${long}!`, true);
    expect(changed.start.cache_read_input_tokens).toBe(0);
    expect(changed.start.cache_creation_input_tokens).toBeGreaterThan(0);
    // Under 1,024 tokens nothing is cached, marked or not.
    await post('short', true);
    expect((await post('short', true)).start.cache_read_input_tokens).toBe(0);
  });

  it('the prefix hash follows the bytes sent: the same prefix, the same hash; a reordered schema, another', () => {
    const tool = (inputSchema: unknown): AgentTool =>
      ({ name: 'mcp__notes__search_notes', description: 'Find notes.', inputSchema }) as AgentTool;
    const schema = { type: 'object', properties: { query: { type: 'string' } } };
    const reordered = { properties: { query: { type: 'string' } }, type: 'object' };
    expect(prefixHash('rules', [tool(schema)])).toBe(prefixHash('rules', [tool(structuredClone(schema))]));
    expect(prefixHash('rules', [tool(schema)])).not.toBe(prefixHash('rules', [tool(reordered)]));
    expect(prefixHash('rules', [tool(schema)])).not.toBe(prefixHash('rules.', [tool(schema)]));
  });
});
