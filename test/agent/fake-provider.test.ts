import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  generateText,
  jsonSchema,
  type LanguageModel,
  type ModelMessage,
  streamText,
  type TextStreamPart,
  type ToolSet,
  tool,
} from 'ai';
import { afterEach, describe, expect, it, vi } from 'vitest';
import {
  type FakeProvider,
  type FakeScript,
  providerEnv,
  startFakeProvider,
  toolResults,
} from '../helpers/fake-provider.js';

const tools = {
  lookup: tool({
    description: 'Look a term up.',
    inputSchema: jsonSchema<{ term: string; limit?: number }>({
      type: 'object',
      properties: { term: { type: 'string' }, limit: { type: 'number' } },
      required: ['term'],
    }),
  }),
};

// Unknown model ids make the Anthropic provider warn about its max_tokens fallback; an explicit limit avoids it.
const common = { system: 'You are terse.', tools, maxOutputTokens: 256 };

interface Api {
  label: string;
  api: 'anthropic' | 'openai';
  model(baseURL: string, apiKey?: string): LanguageModel;
}

const APIS: Api[] = [
  {
    label: 'anthropic messages',
    api: 'anthropic',
    model: (baseURL, apiKey) => createAnthropic({ baseURL, apiKey })('claude-x'),
  },
  {
    label: 'openai chat completions',
    api: 'openai',
    model: (baseURL, apiKey) => createOpenAI({ baseURL, apiKey }).chat('gpt-x'),
  },
  {
    label: 'openai-compatible',
    api: 'openai',
    // Without includeUsage the compatible provider sends no stream_options, so a stream carries no usage.
    model: (baseURL, apiKey) =>
      createOpenAICompatible({ name: 'local', baseURL, apiKey, includeUsage: true })('llama'),
  },
];

const started: FakeProvider[] = [];

async function start(script: FakeScript): Promise<FakeProvider> {
  const fake = await startFakeProvider(script);
  started.push(fake);
  return fake;
}

afterEach(async () => {
  vi.unstubAllEnvs();
  await Promise.all(started.splice(0).map((fake) => fake.close()));
});

/** The stream's error parts; streamText reports failures there rather than by rejecting. */
async function streamErrors(parts: AsyncIterable<TextStreamPart<ToolSet>>): Promise<unknown[]> {
  const errors: unknown[] = [];
  for await (const part of parts) if (part.type === 'error') errors.push(part.error);
  return errors;
}

describe.each(APIS)('fake provider via $label', ({ api, model }) => {
  it('streams a tool call, then text once the tool result is sent back', async () => {
    const fake = await start([
      {
        toolCalls: [{ name: 'lookup', input: { term: 'naïve café ☕', limit: 3 } }],
        usage: { input: 120, output: 17 },
      },
      { text: 'The café is open until nine, every day of the week.', usage: { input: 150, output: 12 } },
    ]);
    const prompt: ModelMessage[] = [{ role: 'user', content: 'When does the café close?' }];

    const first = streamText({ ...common, model: model(fake.url, 'test'), messages: prompt });
    expect(await streamErrors(first.fullStream)).toEqual([]);
    expect(await first.finishReason).toBe('tool-calls');
    const calls = await first.toolCalls;
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({ toolName: 'lookup', input: { term: 'naïve café ☕', limit: 3 } });
    expect(calls[0]!.toolCallId).toMatch(api === 'anthropic' ? /^toolu_/ : /^call_/);
    expect(await first.usage).toMatchObject({ inputTokens: 120, outputTokens: 17, totalTokens: 137 });

    const toolResult: ModelMessage = {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: calls[0]!.toolCallId,
          toolName: 'lookup',
          output: { type: 'text', value: 'open 8-21' },
        },
      ],
    };
    const second = streamText({
      ...common,
      model: model(fake.url, 'test'),
      messages: [...prompt, ...(await first.response).messages, toolResult],
    });
    const chunks: string[] = [];
    for await (const chunk of second.textStream) chunks.push(chunk);
    expect(chunks.length).toBeGreaterThan(1);
    expect(chunks.join('')).toBe('The café is open until nine, every day of the week.');
    expect(await second.finishReason).toBe('stop');
    expect(await second.totalUsage).toMatchObject({ inputTokens: 150, outputTokens: 12 });

    expect(fake.requests).toHaveLength(2);
    const [sent, followUp] = fake.requests;
    expect(sent).toMatchObject({ api, stream: true, system: 'You are terse.' });
    expect(sent!.tools).toEqual([
      {
        name: 'lookup',
        description: 'Look a term up.',
        parameters: expect.objectContaining({ required: ['term'] }),
      },
    ]);
    expect(sent!.headers['content-type']).toMatch(/json/);
    expect(toolResults(sent!)).toEqual([]);
    expect(followUp!.system).toBe('You are terse.');
    expect(followUp!.messages.map((m) => m.role)).toEqual(
      api === 'anthropic' ? ['user', 'assistant', 'user'] : ['user', 'assistant', 'tool'],
    );
    expect(toolResults(followUp!)).toEqual([{ toolCallId: calls[0]!.toolCallId, content: 'open 8-21' }]);
  });

  it('answers generateText without streaming, text and tool call together', async () => {
    const fake = await start([
      { text: 'Checking.', toolCalls: [{ id: 'fixed-id', name: 'lookup', input: { term: 'x' } }] },
    ]);
    const result = await generateText({ ...common, model: model(fake.url, 'test'), prompt: 'Look up x.' });
    expect(result.text).toBe('Checking.');
    expect(result.finishReason).toBe('tool-calls');
    expect(result.toolCalls).toMatchObject([
      { toolCallId: 'fixed-id', toolName: 'lookup', input: { term: 'x' } },
    ]);
    // Default usage is a chars/4 estimate: of the system prompt and messages in, of text and tool calls out.
    expect(result.usage.inputTokens).toBeGreaterThan(0);
    expect(result.usage.outputTokens).toBe(Math.ceil(('Checking.'.length + 'lookup'.length + 12) / 4));
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({ api, stream: false, system: 'You are terse.' });
  });

  it("maps finish 'length' to the SDK's 'length'", async () => {
    const fake = await start([{ text: 'cut sho', finish: 'length' }]);
    const result = streamText({ ...common, model: model(fake.url, 'test'), prompt: 'Talk.' });
    expect(await result.text).toBe('cut sho');
    expect(await result.finishReason).toBe('length');
  });

  it('rejects a request without an API key with a 401 in the API’s own error shape', async () => {
    const fake = await start([{ text: 'never sent' }]);
    // An empty key still sends the header (empty); the compatible provider sends none at all without a key.
    const result = streamText({ ...common, model: model(fake.url, ''), prompt: 'hi', onError: () => {} });
    const [error, ...rest] = await streamErrors(result.fullStream);
    expect(rest).toEqual([]);
    expect(APICallError.isInstance(error)).toBe(true);
    const apiError = error as APICallError;
    expect(apiError.statusCode).toBe(401);
    expect(apiError.isRetryable).toBe(false);
    expect(JSON.parse(apiError.responseBody ?? '')).toMatchObject(
      api === 'anthropic'
        ? { type: 'error', error: { type: 'authentication_error' } }
        : { error: { type: 'invalid_request_error', code: null } },
    );
    expect(fake.requests).toEqual([]);
  });

  it('answers 500, saying so, once the script runs out', async () => {
    const fake = await start([{ text: 'only turn' }]);
    await generateText({ ...common, model: model(fake.url, 'test'), prompt: 'one' });
    const failure = generateText({ ...common, model: model(fake.url, 'test'), prompt: 'two', maxRetries: 0 });
    await expect(failure).rejects.toSatisfy(
      (error) =>
        APICallError.isInstance(error) &&
        error.statusCode === 500 &&
        /script exhausted: request #2 .* only 1 turn/.test(error.message),
    );
  });

  it('serves a scripted error, and the next turn to the SDK’s retry', async () => {
    const fake = await start([{ error: { status: 529, message: 'Overloaded' } }, { text: 'recovered' }]);
    const t0 = Date.now();
    const result = await generateText({ ...common, model: model(fake.url, 'test'), prompt: 'hi' });
    expect(result.text).toBe('recovered');
    expect(fake.requests).toHaveLength(2);
    // retry-after-ms: 0 skips the SDK's default 2 s backoff.
    expect(Date.now() - t0).toBeLessThan(1500);

    const refused = await start([{ error: { status: 429, message: 'Slow down' } }]);
    await expect(
      generateText({ ...common, model: model(refused.url, 'test'), prompt: 'hi', maxRetries: 0 }),
    ).rejects.toSatisfy(
      (error) => APICallError.isInstance(error) && error.statusCode === 429 && error.message === 'Slow down',
    );
  });
});

describe('fake provider', () => {
  it('passes each request and its index to a script function', async () => {
    const seen: Array<[string, number]> = [];
    const fake = await start((request, index) => {
      seen.push([request.model, index]);
      return { text: `turn ${index} for ${request.api}` };
    });
    const anthropic = createAnthropic({ baseURL: fake.url, apiKey: 'test' })('claude-x');
    const openai = createOpenAI({ baseURL: fake.url, apiKey: 'test' }).chat('gpt-x');
    expect((await generateText({ model: anthropic, prompt: 'a', maxOutputTokens: 64 })).text).toBe(
      'turn 0 for anthropic',
    );
    fake.requests.length = 0;
    expect((await generateText({ model: openai, prompt: 'b' })).text).toBe('turn 1 for openai');
    expect(seen).toEqual([
      ['claude-x', 0],
      ['gpt-x', 1],
    ]);
  });

  it('holds the response back for delayMs, so an abort lands first', async () => {
    const fake = await start([{ text: 'late', delayMs: 2000 }]);
    const model = createOpenAI({ baseURL: fake.url, apiKey: 'test' }).chat('gpt-x');
    const t0 = Date.now();
    await expect(
      generateText({ model, prompt: 'hi', abortSignal: AbortSignal.timeout(50), maxRetries: 0 }),
    ).rejects.toThrow();
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('leaves usage out of a compatible stream that did not ask for it, as the API does', async () => {
    const fake = await start([{ text: 'hello there' }]);
    const model = createOpenAICompatible({ name: 'local', baseURL: fake.url, apiKey: 'test' })('llama');
    const result = streamText({ model, prompt: 'hi' });
    expect(await result.text).toBe('hello there');
    expect((await result.usage).inputTokens).toBeUndefined();
    expect(fake.requests[0]!.raw).not.toHaveProperty('stream_options');
  });

  it('providerEnv points the env-configured default providers at the fake', async () => {
    const fake = await start([{ text: 'via anthropic env' }, { text: 'via openai env' }]);
    const env = providerEnv(fake);
    expect(env).toEqual({
      ANTHROPIC_API_KEY: 'test',
      ANTHROPIC_BASE_URL: fake.url,
      OPENAI_API_KEY: 'test',
      OPENAI_BASE_URL: fake.url,
    });
    for (const [name, value] of Object.entries(env)) vi.stubEnv(name, value);
    // Created after stubbing: the providers read the base URL when created, not per request.
    const anthropic = await generateText({
      model: createAnthropic()('claude-x'),
      prompt: 'hi',
      maxOutputTokens: 64,
    });
    const openai = await generateText({ model: createOpenAI().chat('gpt-x'), prompt: 'hi' });
    expect([anthropic.text, openai.text]).toEqual(['via anthropic env', 'via openai env']);
    expect(fake.requests.map((r) => r.headers['x-api-key'] ?? r.headers.authorization)).toEqual([
      'test',
      'Bearer test',
    ]);
  });
});
