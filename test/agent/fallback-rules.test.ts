import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createAnthropic } from '@ai-sdk/anthropic';
import { generateText, type ModelMessage, streamText } from 'ai';
import { describe, expect, it } from 'vitest';
import { fallbackReason } from '../../src/agent/fallback.js';
import { historyFor } from '../../src/agent/provider-history.js';
import { type FakeTurn, OVERLOADED } from '../helpers/fake-provider.js';
import { testScope } from '../helpers/scope.js';

const scope = testScope();

/** The error the AI SDK gives for one call to a fake Anthropic answering `turn`, after `maxRetries` retries. */
async function failureOf(turn: FakeTurn, maxRetries: number): Promise<unknown> {
  const fake = await scope.fake(() => turn);
  const model = createAnthropic({ baseURL: fake.url, apiKey: 'test' })('claude-sonnet-4-5');
  return generateText({ model, prompt: 'hi', maxRetries }).then(
    () => expect.fail('the call should fail'),
    (error: unknown) => error,
  );
}

describe('which failures go to the fallback', () => {
  it('overload, rate limits and server errors past the retries do', async () => {
    expect(fallbackReason(await failureOf(OVERLOADED, 1))).toBe('overloaded (529: Overloaded)');
    expect(fallbackReason(await failureOf({ error: { status: 429, message: 'Slow down' } }, 1))).toBe(
      'rate limited (429: Slow down)',
    );
    expect(fallbackReason(await failureOf({ error: { status: 503, message: 'Unavailable' } }, 0))).toBe(
      'server error (503: Unavailable)',
    );
  });

  it('bad requests, refused keys, unknown models and content rejections do not', async () => {
    for (const status of [400, 401, 403, 404, 413]) {
      const error = await failureOf({ error: { status, message: `status ${status}` } }, 2);
      expect(fallbackReason(error), String(status)).toBeUndefined();
    }
    expect(fallbackReason(new Error('aborted'))).toBeUndefined();
    expect(fallbackReason(undefined)).toBeUndefined();
  });

  it('a connection refused does', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    const model = createAnthropic({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: 'test' })('claude-x');
    const error = await generateText({ model, prompt: 'hi', maxRetries: 0 }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(fallbackReason(error)).toMatch(/^no connection \(Cannot connect to API: .*ECONNREFUSED/);
  });

  it('an overload Anthropic reports inside a stream that had started does', async () => {
    // After message_start and some text: no HTTP status to go by, only the error event's type.
    const fake = await scope.fake(() => ({
      text: 'Let me',
      streamError: { type: 'overloaded_error', message: 'Overloaded' },
    }));
    const model = createAnthropic({ baseURL: fake.url, apiKey: 'test' })('claude-x');
    let failure: unknown;
    const result = streamText({ model, prompt: 'hi', maxRetries: 0, onError: () => {} });
    for await (const part of result.fullStream) if (part.type === 'error') failure = part.error;
    expect(fallbackReason(failure)).toBe('overloaded (Overloaded)');
  });
});

describe('the history as another provider takes it', () => {
  const foreign = 'functions.search_knowledge:0';
  const history: ModelMessage[] = [
    { role: 'user', content: 'find it' },
    {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'thinking', providerOptions: { anthropic: { signature: 'sig' } } },
        { type: 'text', text: '\n\n' },
        { type: 'tool-call', toolCallId: foreign, toolName: 'search_knowledge', input: { query: 'x' } },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: foreign,
          toolName: 'search_knowledge',
          output: { type: 'text', value: 'found' },
        },
      ],
    },
    { role: 'assistant', content: [{ type: 'text', text: ' ' }] },
  ];

  it('Anthropic: ids renamed alike in call and result, blank text and the messages it leaves empty dropped', () => {
    const out = historyFor(history, 'anthropic');
    expect(out.map((m) => m.role)).toEqual(['user', 'assistant', 'tool']);
    const assistant = out[1] as Extract<ModelMessage, { role: 'assistant' }>;
    const parts = assistant.content as Array<{ type: string; toolCallId?: string }>;
    // Its own signed reasoning stays.
    expect(parts.map((p) => p.type)).toEqual(['reasoning', 'tool-call']);
    const id = parts[1]!.toolCallId!;
    expect(id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect((out[2] as Extract<ModelMessage, { role: 'tool' }>).content[0]).toMatchObject({ toolCallId: id });
    // The session's record is left as it was.
    expect(JSON.stringify(history)).toContain(foreign);
  });

  it('OpenAI-compatible: reasoning signed by Anthropic dropped, ids and text kept', () => {
    const out = historyFor(history, 'openai-compatible');
    const parts = (out[1] as Extract<ModelMessage, { role: 'assistant' }>).content as Array<{ type: string }>;
    expect(parts.map((p) => p.type)).toEqual(['text', 'tool-call']);
    expect(JSON.stringify(out)).toContain(foreign);
    expect(out).toHaveLength(4);
  });

  it('OpenAI: ids past 40 characters renamed', () => {
    const long = `call_${'x'.repeat(60)}`;
    const out = historyFor(
      [
        {
          role: 'assistant',
          content: [{ type: 'tool-call', toolCallId: long, toolName: 't', input: {} }],
        },
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: long, toolName: 't', output: { type: 'text', value: '' } },
          ],
        },
      ],
      'openai',
    );
    expect(JSON.stringify(out)).not.toContain(long);
    expect(JSON.stringify(out).match(/call_[0-9a-f]{24}/g)).toHaveLength(2);
  });

  it('the same array when nothing needs changing (a session on one provider)', () => {
    const own: ModelMessage[] = [
      { role: 'user', content: 'hi' },
      {
        role: 'assistant',
        content: [{ type: 'tool-call', toolCallId: 'toolu_01abc', toolName: 't', input: {} }],
      },
    ];
    expect(historyFor(own, 'anthropic')).toBe(own);
    expect(historyFor(own, 'openai')).toBe(own);
    expect(historyFor(history, 'some-other-provider')).toBe(history);
  });
});
