import { context, trace } from '@opentelemetry/api';
import {
  InMemorySpanExporter,
  NodeTracerProvider,
  type ReadableSpan,
  SimpleSpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { describe, expect, it } from 'vitest';
import { resolveModel } from '../../src/agent/model.js';
import { costOf, priceOf } from '../../src/agent/prices.js';
import { AgentSession } from '../../src/agent/session.js';
import { startTelemetry } from '../../src/telemetry/start.js';
import { tack } from '../helpers/cli.js';
import { providerEnv, toolResults } from '../helpers/fake-provider.js';
import { type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver.js';
import { fixtureEntry } from '../helpers/project.js';
import { testScope } from '../helpers/scope.js';

const MODEL_ID = 'claude-sonnet-4-5';
const SECRET = 'secret-argument-value-7f3a';
const PROMPT = 'prompt-text-marker-91c2';

const { fake, project, defer } = testScope();

/**
 * One real `tack run` process with OTEL_EXPORTER_OTLP_ENDPOINT set, against the fake model server and a real stdio
 * MCP server: the receiver gets the run's spans (flushed before the process exits) and they nest as a trace
 * viewer would show them: run > step > chat (> the AI SDK's spans) and run > step > execute_tool > MCP request.
 */
describe('OpenTelemetry: the spans of an agent run', () => {
  it('tack run exports invoke_agent > step > chat / execute_tool > tools/call, with tokens and cost, no prompt or argument', async () => {
    const receiver = await startOtlpReceiver();
    defer(() => receiver.close());
    const p = project('tack-otel-');
    p.write('tack.json', {
      mcpServers: { fx: fixtureEntry('stdio-server.js') },
      permissions: { allow: ['mcp__fx__echo'] },
    });
    // As Anthropic reports them: the first step writes its prompt to the cache, the second reads it back.
    const usage = [
      { input: 200, output: 50, cacheRead: 0, cacheWrite: 800 },
      { input: 200, output: 20, cacheRead: 1000, cacheWrite: 0 },
    ];
    const all = (u: (typeof usage)[number]) => u.input + u.cacheRead + u.cacheWrite;
    const provider = await fake((request) =>
      toolResults(request).length === 0
        ? { toolCalls: [{ name: 'mcp__fx__echo', input: { text: SECRET } }], usage: usage[0] }
        : { text: 'The tool answered.', usage: usage[1] },
    );
    const run = await tack(['run', `${PROMPT}: echo it`, '--model', `anthropic:${MODEL_ID}`], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('The tool answered.');

    const spans = receiver.spans();

    const names = spans.map((s) => s.name).join(', ');
    const named = (name: string) => spans.filter((s) => s.name === name);
    const one = (name: string) => {
      const found = named(name);
      expect(found, `${name} among: ${names}`).toHaveLength(1);
      return found[0]!;
    };
    const parentOf = (span: ReceivedSpan) => spans.find((s) => s.spanId === span.parentSpanId);

    // The run, and everything in one trace under it.
    const agent = one('invoke_agent tack');
    expect(agent.parentSpanId).toBeUndefined();
    for (const span of spans) expect(span.traceId, span.name).toBe(agent.traceId);
    const price = priceOf(MODEL_ID)!;
    const cost = (u: (typeof usage)[number]) =>
      costOf(
        {
          inputTokens: all(u),
          outputTokens: u.output,
          cachedInputTokens: u.cacheRead,
          cacheWriteTokens: u.cacheWrite,
        },
        price,
      );
    expect(agent.attributes).toMatchObject({
      'gen_ai.operation.name': 'invoke_agent',
      'gen_ai.agent.name': 'tack',
      'gen_ai.provider.name': 'anthropic',
      'gen_ai.request.model': MODEL_ID,
      'gen_ai.usage.input_tokens': 2200,
      'gen_ai.usage.output_tokens': 70,
      'gen_ai.usage.cache_read.input_tokens': 1000,
      'gen_ai.usage.cache_creation.input_tokens': 800,
      'tack.end.reason': 'completed',
      'tack.steps': 2,
    });
    expect(agent.attributes['tack.cost.usd']).toBeCloseTo(cost(usage[0]!) + cost(usage[1]!), 10);
    expect(agent.attributes['gen_ai.conversation.id']).toMatch(/\S/);

    // Two steps, each with one model call; the first also ran the tool.
    const steps = named('tack.step').sort(
      (a, b) => Number(a.attributes['tack.step.number']) - Number(b.attributes['tack.step.number']),
    );
    expect(steps.map((s) => s.attributes['tack.step.number'])).toEqual([1, 2]);
    for (const step of steps) expect(step.parentSpanId).toBe(agent.spanId);
    const chats = named(`chat ${MODEL_ID}`);
    expect(chats).toHaveLength(2);
    for (const [i, step] of steps.entries()) {
      const chat = chats.find((c) => c.parentSpanId === step.spanId);
      expect(chat, `the model call of step ${i + 1}`).toBeDefined();
      expect(chat!.kind).toBe(3); // CLIENT
      expect(chat!.attributes).toMatchObject({
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'anthropic',
        'gen_ai.request.model': MODEL_ID,
        'gen_ai.response.model': MODEL_ID,
        'gen_ai.usage.input_tokens': all(usage[i]!),
        'gen_ai.usage.output_tokens': usage[i]!.output,
        'gen_ai.usage.cache_read.input_tokens': usage[i]!.cacheRead,
        'gen_ai.usage.cache_creation.input_tokens': usage[i]!.cacheWrite,
      });
      expect(chat!.attributes['tack.cost.usd']).toBeCloseTo(cost(usage[i]!), 10);
      // The AI SDK's own spans, in the same tracer, inside tack's model call.
      const sdk = spans.find((s) => s.name === 'ai.streamText' && s.parentSpanId === chat!.spanId);
      expect(sdk, `ai.streamText under step ${i + 1} among: ${names}`).toBeDefined();
      expect(spans.some((s) => s.name === 'ai.streamText.doStream' && s.parentSpanId === sdk!.spanId)).toBe(
        true,
      );
    }

    // The tool call under the first step, and the MCP request under it.
    const tool = one('execute_tool mcp__fx__echo');
    expect(tool.parentSpanId).toBe(steps[0]!.spanId);
    expect(tool.attributes).toMatchObject({
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'mcp__fx__echo',
      'tack.upstream.server': 'fx',
      'tack.outcome': 'ok',
    });
    expect(tool.attributes['gen_ai.tool.call.id']).toEqual(expect.any(String));
    const request = one('tools/call echo');
    expect(request.kind).toBe(3); // CLIENT
    expect(parentOf(request)).toBe(tool);
    expect(request.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'tack.upstream.server': 'fx',
    });

    // Neither the argument (nor the tool's echo of it) nor the prompt is exported anywhere.
    const exported = receiver.everything();
    expect(exported).not.toContain(SECRET);
    expect(exported).not.toContain(PROMPT);
  }, 60_000);

  it('run_code scripts: the tool calls of each script nest under its own execute_tool run_code span, across the engine thread', async () => {
    const receiver = await startOtlpReceiver();
    defer(() => receiver.close());
    const p = project('tack-otel-code-');
    p.write('tack.json', {
      mcpServers: { fx: fixtureEntry('stdio-server.js') },
      permissions: { allow: ['mcp__fx__echo'] },
      agent: { codeMode: 'on' },
    });
    // Two scripts in two steps: the second runs on a thread the first one started (or a warm one).
    const code = (n: number) => `await mcp.fx.echo({ text: '${SECRET}-${n}' }); return 'ok';`;
    const provider = await fake((request) => {
      const done = toolResults(request).length;
      return done < 2
        ? { toolCalls: [{ id: `rc${done}`, name: 'run_code', input: { code: code(done) } }] }
        : { text: 'The scripts ran.' };
    });
    const run = await tack(['run', 'run two scripts', '--model', `anthropic:${MODEL_ID}`], {
      cwd: p.dir,
      env: { ...p.env, ...providerEnv(provider), OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint },
    });
    expect(run.code, run.stderr).toBe(0);
    const spans = receiver.spans();
    const names = spans.map((s) => s.name).join(', ');
    const scripts = spans.filter((s) => s.name === 'execute_tool run_code');
    expect(scripts, names).toHaveLength(2);
    for (const script of scripts) {
      const calls = spans.filter(
        (s) => s.name === 'execute_tool mcp__fx__echo' && s.parentSpanId === script.spanId,
      );
      expect(
        calls,
        `one echo under run_code ${script.attributes['gen_ai.tool.call.id']}: ${names}`,
      ).toHaveLength(1);
      const upstream = spans.filter(
        (s) => s.kind === 3 && s.name.startsWith('tools/call') && s.parentSpanId === calls[0]!.spanId,
      );
      expect(upstream, names).toHaveLength(1);
    }
    expect(JSON.stringify(spans)).not.toContain(SECRET);
  });

  it("in the library, the application's own tracer provider gets the session's spans; startTelemetry leaves it in place", async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    provider.register();
    defer(async () => {
      await provider.shutdown();
      trace.disable();
      context.disable();
    });
    // tack's own start sees the provider and starts nothing (else every span would go to a second SDK, or nowhere).
    const own = await startTelemetry({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9' });
    await own.shutdown();
    expect(trace.getTracerProvider().getTracer('probe').startSpan('probe').isRecording()).toBe(true);

    const p = project('tack-otel-lib-');
    const model = await fake([{ text: `answered ${PROMPT}`, usage: { input: 300, output: 7 } }]);
    const session = await AgentSession.create({
      model: resolveModel('openai:gpt-4.1', providerEnv(model)),
      cwd: p.dir,
      env: p.env,
      sessionsDir: p.home,
      maxRetries: 0,
    });
    const result = await session.run(`${PROMPT}: say hello`);
    expect(result.reason).toBe('completed');

    const spans = exporter.getFinishedSpans();
    const byName = (name: string) => spans.find((s) => s.name === name);
    const parentId = (span: ReadableSpan) => span.parentSpanContext?.spanId;
    const agent = byName('invoke_agent tack')!;
    const step = byName('tack.step')!;
    const chat = byName('chat gpt-4.1')!;
    expect(agent, spans.map((s) => s.name).join(', ')).toBeDefined();
    expect(parentId(step)).toBe(agent.spanContext().spanId);
    expect(parentId(chat)).toBe(step.spanContext().spanId);
    expect(chat.attributes).toMatchObject({
      'gen_ai.provider.name': 'openai',
      'gen_ai.usage.input_tokens': 300,
      'gen_ai.usage.output_tokens': 7,
    });
    expect(parentId(byName('ai.streamText')!)).toBe(chat.spanContext().spanId);
    expect(JSON.stringify(spans.map((s) => [s.name, s.attributes, s.events]))).not.toContain(PROMPT);
  });
});
