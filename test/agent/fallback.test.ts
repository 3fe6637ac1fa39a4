import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { AgentEvent } from '../../src/agent/events.js';
import { costOf } from '../../src/agent/prices.js';
import { readTranscript } from '../../src/agent/transcript.js';
import { tack, tackPiped } from '../helpers/cli.js';
import {
  FAKE_SIGNATURE,
  type FakeRequest,
  OVERLOADED,
  providerEnv,
  toolResults,
} from '../helpers/fake-provider.js';
import { startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { REPO, type TempProject } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const ACME = join(REPO, 'test', 'fixtures', 'okf', 'acme_retail');
const SONNET = 'anthropic:claude-sonnet-4-5';
const LOCAL = 'openai-compatible:local-model';
/** What `local-model` costs in these tests, so its steps' cost is not 0 by accident. */
const LOCAL_PRICE = { input: 1, output: 2 };
const SONNET_PRICE = { input: 3, output: 15, cachedInput: 0.3 };
/** The session's own try and its two retries (the agent's default maxRetries). */
const ATTEMPTS = 3;

const scope = testScope();

function project(agent: Record<string, unknown>): TempProject {
  const p = scope.project('tack-fallback-');
  p.write('tack.json', {
    knowledge: { bundles: [ACME] },
    agent: { prices: { 'local-model': LOCAL_PRICE }, ...agent },
  });
  return p;
}

/** The events of the project's one transcript. */
function transcriptEvents(p: TempProject): AgentEvent[] {
  const root = join(p.home, 'state', 'sessions');
  const files = existsSync(root)
    ? readdirSync(root, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'))
    : [];
  expect(files).toHaveLength(1);
  return readTranscript(join(root, files[0]!)).events;
}

const byApi = (requests: FakeRequest[], api: FakeRequest['api']) => requests.filter((r) => r.api === api);

describe('fallback models', () => {
  it('after a 529 overload past the retries the run goes on, and completes, on the next model', async () => {
    const p = project({ fallback: [LOCAL] });
    const provider = await scope.fake((request) => {
      if (request.api === 'openai') return { text: 'Gross margin is defined in metrics/gross-margin.' };
      // Anthropic answers the first step (thinking, then a tool call), then is overloaded.
      if (request.messages.length === 1)
        return {
          thinking: 'The knowledge base will say.',
          toolCalls: [{ name: 'search_knowledge', input: { query: 'gross margin' } }],
        };
      return OVERLOADED;
    });
    const run = await tack(['run', 'find gross margin', '--model', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('Gross margin is defined in metrics/gross-margin.');
    expect(run.stderr).toContain(
      `fallback: ${SONNET} failed (overloaded (529: Overloaded)); step 2 and the rest of the run go to ${LOCAL}`,
    );
    expect(run.stderr).toContain('[completed] answered after 2 steps');

    // The first step, then step 2 tried and retried on Anthropic, then once on the fallback.
    expect(byApi(provider.requests, 'anthropic')).toHaveLength(1 + ATTEMPTS);
    const [second] = byApi(provider.requests, 'openai');
    expect(second?.model).toBe('local-model');
    // The history as the other provider takes it: the task, the call with its id and the result under that id;
    // Anthropic's signed thinking is not passed on as the fallback's own reasoning.
    const first = provider.requests[0]!;
    expect(second!.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    expect(second!.messages[0]!.content).toBe('find gross margin');
    expect(second!.messages[1]!.tool_calls).toEqual([
      {
        id: 'toolu_fake_0_0',
        type: 'function',
        function: { name: 'search_knowledge', arguments: JSON.stringify({ query: 'gross margin' }) },
      },
    ]);
    expect(toolResults(second!)).toHaveLength(1);
    expect(toolResults(second!)[0]!.toolCallId).toBe('toolu_fake_0_0');
    expect(toolResults(second!)[0]!.content).toContain('okf://acme_retail/metrics/gross-margin');
    expect(JSON.stringify(second!.raw)).not.toContain('reasoning');
    expect(JSON.stringify(second!.raw)).not.toContain('knowledge base will say');
    // The system prompt and the tools went along unchanged.
    expect(second!.system).toBe(first.system);
    expect(second!.tools.map((t) => t.name)).toEqual(first.tools.map((t) => t.name));

    // The transcript holds the switch, and each step's usage at the prices of the model that ran it.
    const events = transcriptEvents(p);
    expect(events[0]).toMatchObject({ type: 'session-start', model: SONNET, fallback: [LOCAL] });
    const fallbacks = events.filter((e) => e.type === 'model-fallback');
    expect(fallbacks).toHaveLength(1);
    expect(fallbacks[0]).toMatchObject({
      type: 'model-fallback',
      step: 2,
      from: SONNET,
      to: LOCAL,
      reason: 'overloaded (529: Overloaded)',
    });
    // The thinking was in the history (signed by Anthropic), and stays there for Anthropic's next turn.
    const assistant = events.find((e) => e.type === 'message' && e.message.role === 'assistant');
    expect(JSON.stringify(assistant)).toContain(FAKE_SIGNATURE);
    const usages = events.filter((e) => e.type === 'usage');
    expect(usages.map((u) => [u.step, u.model])).toEqual([
      [1, SONNET],
      [2, LOCAL],
    ]);
    const [u1, u2] = usages.map((u) => u.stepUsage);
    expect(u1!.costUsd).toBeCloseTo(costOf(u1!, SONNET_PRICE), 12);
    expect(u2!.costUsd).toBeCloseTo(costOf(u2!, LOCAL_PRICE), 12);
    expect(u2!.costUsd).toBeGreaterThan(0);
    const end = events.at(-1);
    expect(end).toMatchObject({ type: 'session-end', reason: 'completed', steps: 2 });
    if (end?.type !== 'session-end') throw new Error('no session-end');
    expect(end.total.costUsd).toBeCloseTo(u1!.costUsd + u2!.costUsd, 12);
    expect(end.total.inputTokens).toBe(u1!.inputTokens + u2!.inputTokens);
  });

  it('an overload inside a stream that had started answering falls back too; the answer starts on a new line', async () => {
    const p = project({ fallback: [LOCAL] });
    const provider = await scope.fake((request) =>
      request.api === 'anthropic'
        ? { text: 'Let me think', streamError: { type: 'overloaded_error', message: 'Overloaded' } }
        : { text: 'The answer.' },
    );
    const run = await tack(['run', 'hello', '--model', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain(`fallback: ${SONNET} failed (overloaded (Overloaded))`);
    expect(run.stdout).toBe('Let me think\nThe answer.\n');
    // An error inside a stream is not retried by the AI SDK: one request, then the fallback.
    expect(provider.requests.map((r) => r.api)).toEqual(['anthropic', 'openai']);
    // The broken-off answer never entered the history.
    const [request] = byApi(provider.requests, 'openai');
    expect(JSON.stringify(request!.messages)).not.toContain('Let me think');
  });

  it('each model tried is its own chat span under the step: the failed one marked, the fallback with its tokens', async () => {
    const receiver = await startOtlpReceiver();
    scope.defer(() => receiver.close());
    const p = project({ fallback: [LOCAL] });
    const provider = await scope.fake((request) =>
      request.api === 'anthropic' ? OVERLOADED : { text: 'Hello.', usage: { input: 40, output: 3 } },
    );
    const run = await tack(['run', 'hello', '--model', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
    });
    expect(run.code, run.stderr).toBe(0);
    const spans = receiver.spans();
    const [step] = spans.filter((s) => s.name === 'tack.step');
    const failed = spans.find((s) => s.name === 'chat claude-sonnet-4-5');
    const answered = spans.find((s) => s.name === 'chat local-model');
    expect(failed?.parentSpanId).toBe(step!.spanId);
    expect(answered?.parentSpanId).toBe(step!.spanId);
    // OTLP's status code 2 is ERROR.
    expect(failed!.status?.code).toBe(2);
    expect(failed!.attributes['error.type']).toBeTypeOf('string');
    expect(answered!.status?.code).not.toBe(2);
    expect(answered!.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai-compatible',
      'gen_ai.usage.input_tokens': 40,
      'gen_ai.usage.output_tokens': 3,
    });
  });

  it('a bad request (400) or a refused key (401) ends the run on its own model: no fallback', async () => {
    for (const [status, message] of [
      [400, 'messages: text content blocks must be non-empty'],
      [401, 'invalid x-api-key'],
    ] as const) {
      const p = project({ fallback: [LOCAL] });
      const provider = await scope.fake((request) =>
        request.api === 'anthropic' ? { error: { status, message } } : { text: 'never sent' },
      );
      const run = await tack(['run', 'hello', '--model', SONNET], {
        cwd: p.dir,
        env: { ...p.env, ...providerEnv(provider) },
      });
      expect(run.code, String(status)).toBe(1);
      expect(run.stderr).toContain(message);
      expect(run.stderr).not.toContain('fallback:');
      // Neither is retried: one request, and none to the fallback.
      expect(provider.requests.map((r) => r.api)).toEqual(['anthropic']);
      expect(transcriptEvents(p).some((e) => e.type === 'model-fallback')).toBe(false);
    }
  });

  it('--fallback: a 5xx from an OpenAI-compatible server moves to Anthropic, with tool-call ids it accepts', async () => {
    const p = project({});
    // Some OpenAI-compatible servers (Kimi's) name their calls `functions.<name>:<n>`; Anthropic takes
    // [A-Za-z0-9_-] only.
    const foreignId = 'functions.search_knowledge:0';
    const provider = await scope.fake((request) => {
      if (request.api === 'anthropic') return { text: 'Found it.' };
      if (request.messages.length === 1)
        return { toolCalls: [{ id: foreignId, name: 'search_knowledge', input: { query: 'gross margin' } }] };
      return { error: { status: 503, message: 'the model is loading' } };
    });
    const run = await tack(['run', 'find gross margin', '--model', LOCAL, '--fallback', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('Found it.');
    expect(run.stderr).toContain(`fallback: ${LOCAL} failed (server error (503: the model is loading))`);
    const [request] = byApi(provider.requests, 'anthropic');
    const content = request!.messages[1]!.content as Array<{ type: string; id?: string }>;
    const call = content.find((block) => block.type === 'tool_use');
    expect(call?.id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(toolResults(request!).map((r) => r.toolCallId)).toEqual([call!.id]);
    // The transcript keeps the history as the model that wrote it sent it.
    const events = transcriptEvents(p);
    const assistant = events.find((e) => e.type === 'message' && e.message.role === 'assistant');
    expect(JSON.stringify(assistant)).toContain(foreignId);
  });

  it('goes down the list in order, one model after another', async () => {
    const p = project({ fallback: ['openai:gpt-4.1', LOCAL] });
    const provider = await scope.fake((request) => {
      if (request.api === 'anthropic') return OVERLOADED;
      return request.model === 'gpt-4.1'
        ? { error: { status: 502, message: 'Bad gateway' } }
        : { text: 'Third time lucky.' };
    });
    const run = await tack(['run', 'hello', '--model', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe('Third time lucky.');
    const switches = transcriptEvents(p).filter((e) => e.type === 'model-fallback');
    expect(switches.map((e) => [e.from, e.to])).toEqual([
      [SONNET, 'openai:gpt-4.1'],
      ['openai:gpt-4.1', LOCAL],
    ]);
    expect(provider.requests.map((r) => r.model)).toEqual([
      ...Array<string>(ATTEMPTS).fill('claude-sonnet-4-5'),
      ...Array<string>(ATTEMPTS).fill('gpt-4.1'),
      'local-model',
    ]);
  });

  it('the last fallback failing too ends the run with its error', async () => {
    const p = project({ fallback: [LOCAL] });
    const provider = await scope.fake((request) =>
      request.api === 'anthropic' ? OVERLOADED : { error: { status: 500, message: 'out of memory' } },
    );
    const run = await tack(['run', 'hello', '--model', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`fallback: ${SONNET} failed`);
    expect(run.stderr).toContain('out of memory');
    expect(byApi(provider.requests, 'anthropic')).toHaveLength(ATTEMPTS);
    expect(byApi(provider.requests, 'openai')).toHaveLength(ATTEMPTS);
  });

  it('a fallback that cannot be reached is left out with a note; the run goes on', async () => {
    const p = project({ fallback: ['openai:gpt-5'] });
    const provider = await scope.fake([{ text: 'Hello.' }, { text: 'Again.' }]);
    const run = await tack(['run', 'hello', '--model', SONNET], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider), OPENAI_API_KEY: undefined },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('fallback model openai:gpt-5 left out');
    expect(run.stderr).toContain('OPENAI_API_KEY is not set');
    // --fallback "" turns the configured list off: nothing to leave out.
    const off = await tack(['run', 'hello', '--model', SONNET, '--fallback', ''], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider), OPENAI_API_KEY: undefined },
    });
    expect(off.code, off.stderr).toBe(0);
    expect(off.stderr).not.toContain('fallback model');
  });

  it('the line chat says so, the next message starts on the own model again, /cost splits by model', async () => {
    const p = project({ fallback: [LOCAL] });
    let overloaded = true;
    const provider = await scope.fake((request) => {
      if (request.api === 'openai') {
        overloaded = false;
        return { text: 'From the fallback.' };
      }
      return overloaded ? OVERLOADED : { text: 'Back on Claude.' };
    });
    const run = await tackPiped(['chat', '--plain', '--model', SONNET], 'first\nsecond\n/cost\n/exit\n', {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider) },
      defer: scope.defer,
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('From the fallback.\nBack on Claude.\n');
    expect(run.stderr).toContain(`fallback: ${SONNET} failed (overloaded (529: Overloaded))`);
    expect(run.stdout).toMatch(new RegExp(`^  ${SONNET}: \\d+ in, \\d+ out, \\$\\d`, 'm'));
    expect(run.stdout).toMatch(new RegExp(`^  ${LOCAL}: \\d+ in, \\d+ out, \\$\\d`, 'm'));
    expect(provider.requests.map((r) => r.api)).toEqual([
      ...Array<string>(ATTEMPTS).fill('anthropic'),
      'openai',
      'anthropic',
    ]);
  });
});
