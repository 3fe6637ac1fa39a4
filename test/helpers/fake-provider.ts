/**
 * A scripted model server on 127.0.0.1 that speaks the real Anthropic Messages and OpenAI Chat Completions
 * wire formats, so the harness runs through the unmodified AI SDK providers without reaching a hosted API.
 *
 * The shapes follow what @ai-sdk/anthropic@3 and @ai-sdk/openai@3 parse (their zod chunk schemas) and what the
 * hosted APIs send in practice: Anthropic's `ping` after `message_start` and the empty first `input_json_delta`,
 * OpenAI's leading role chunk, `usage: null` on every chunk once `include_usage` is asked for, and the trailing
 * usage chunk with `choices: []`. Usage is reported as each API does, prompt caching included (fake-cache.ts):
 * Anthropic's `cache_read_input_tokens` / `cache_creation_input_tokens` next to the uncached `input_tokens`,
 * OpenAI's `prompt_tokens_details.cached_tokens` within `prompt_tokens`.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type CacheUsage, FakePromptCache } from './fake-cache.js';

export type FakeApi = 'anthropic' | 'openai';

export interface FakeToolCall {
  /** Defaults to a deterministic id (`toolu_fake_<request>_<n>` / `call_fake_<request>_<n>`). */
  id?: string;
  name: string;
  input: unknown;
}

export interface FakeTurn {
  text?: string;
  toolCalls?: FakeToolCall[];
  /**
   * Defaults: what the simulated prompt cache gives (input: chars of the request's tools, system and messages
   * / 4, split into cache reads, cache writes and the rest), output = chars of this turn / 4. Given: `input` is
   * the uncached input on Anthropic and all of it on OpenAI, as each API reports; the cache figures default to 0.
   */
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
  /** Defaults to `tool_calls` when the turn has tool calls, else `stop`. */
  finish?: 'stop' | 'tool_calls' | 'length';
  /** Answer with this HTTP status and the API's own error JSON instead of a completion (see OVERLOADED). */
  error?: { status: number; message: string };
  /** Anthropic only: a signed `thinking` block before the answer, as with extended thinking. */
  thinking?: string;
  /**
   * Anthropic only: the stream breaks off after the content with this error event (HTTP 200 already sent), as
   * the API does when it overloads mid-answer: `{"type":"error","error":{"type":"overloaded_error",...}}`.
   */
  streamError?: { type: string; message: string };
  /** Wait this long before the response starts (headers included), e.g. to test timeouts and aborts. */
  delayMs?: number;
}

export interface FakeTool {
  name: string;
  description?: string;
  /** The tool's JSON Schema (`input_schema` on Anthropic, `function.parameters` on OpenAI). */
  parameters: unknown;
}

/**
 * What the model was sent, the same shape for both APIs. OpenAI's `system`/`developer` messages are lifted into
 * `system` and left out of `messages`, as Anthropic carries them outside `messages` too; everything else in
 * `messages` is exactly as received, so tool results keep their API's own shape.
 */
export interface FakeRequest {
  api: FakeApi;
  model: string;
  system: string;
  /** Other fields (OpenAI's `tool_calls`, `tool_call_id`) are kept too. */
  messages: Array<{ role: string; content: unknown; [field: string]: unknown }>;
  tools: FakeTool[];
  stream: boolean;
  /** The parsed request body. */
  raw: unknown;
  /** The request body as received, byte for byte (UTF-8). */
  body: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** The usage the answer reported, set once it was sent (`input` as the API counts it, see FakeTurn). */
  usage?: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

export interface FakeProviderOptions {
  /**
   * false: the prompt cache serves nothing, as when a request marks no breakpoint on Anthropic (to compare the
   * same session with and without them). Default true.
   */
  promptCache?: boolean;
}

/** Anthropic's answer when it is overloaded: HTTP 529, `{"type":"error","error":{"type":"overloaded_error",...}}`. */
export const OVERLOADED: FakeTurn = { error: { status: 529, message: 'Overloaded' } };

export type FakeScript =
  | readonly FakeTurn[]
  | ((request: FakeRequest, index: number) => FakeTurn | Promise<FakeTurn>);

export interface FakeProvider {
  /** The base URL both SDKs take, with the `/v1` they expect already on it. */
  url: string;
  /** Every authenticated, well-formed request, in arrival order; `requests[i]` got turn `i` (until cleared). */
  requests: FakeRequest[];
  close(): Promise<void>;
}

/** A non-2xx answer, already in the shape of the API it is sent on. */
class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Json = Record<string, unknown>;

export async function startFakeProvider(
  script: FakeScript,
  options: FakeProviderOptions = {},
): Promise<FakeProvider> {
  const requests: FakeRequest[] = [];
  const cache = new FakePromptCache(options.promptCache !== false);
  // Counted apart from `requests` so a test may clear that list without rewinding the script.
  let served = 0;

  const turnFor = async (request: FakeRequest, index: number): Promise<FakeTurn> => {
    if (typeof script === 'function') return script(request, index);
    const turn = script[index];
    if (turn === undefined) {
      throw new HttpError(
        500,
        `fake-provider: script exhausted: request #${index + 1} arrived but only ${script.length} turn(s) were scripted`,
      );
    }
    return turn;
  };

  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const path = new URL(req.url ?? '/', 'http://127.0.0.1').pathname.replace(/\/+$/, '');
    const api: FakeApi = path.endsWith('/chat/completions') ? 'openai' : 'anthropic';
    try {
      if (req.method !== 'POST' || (path !== '/v1/messages' && path !== '/v1/chat/completions')) {
        throw new HttpError(404, `fake-provider: no route for ${req.method} ${req.url}`);
      }
      const headers = flattenHeaders(req);
      checkAuth(api, headers);
      const { raw, text } = await readJson(req);
      const request = {
        ...(api === 'anthropic' ? anthropicRequest(raw, headers) : openaiRequest(raw, headers)),
        body: text,
      };
      const index = served++;
      requests.push(request);
      let turn: FakeTurn;
      try {
        turn = await turnFor(request, index);
      } catch (error) {
        if (error instanceof HttpError) throw error;
        throw new HttpError(500, `fake-provider: script function threw: ${errorMessage(error)}`);
      }
      if (turn.delayMs) await sleep(turn.delayMs);
      if (res.destroyed) return;
      if (turn.error) throw new HttpError(turn.error.status, turn.error.message);
      const cached = api === 'anthropic' ? cache.anthropic(raw) : cache.openai(raw);
      const reply = resolveTurn(turn, request, index, cached);
      request.usage = reply.usage;
      if (api === 'anthropic') {
        if (request.stream) writeSse(res, anthropicEvents(reply), false);
        else writeJson(res, 200, anthropicMessage(reply), api);
      } else {
        const includeUsage = isRecord(raw.stream_options) && raw.stream_options.include_usage === true;
        if (request.stream) writeSse(res, openaiChunks(reply, includeUsage), true);
        else writeJson(res, 200, openaiCompletion(reply), api);
      }
    } catch (error) {
      if (res.headersSent || res.destroyed) {
        res.destroy();
        return;
      }
      const status = error instanceof HttpError ? error.status : 500;
      const message = error instanceof HttpError ? error.message : `fake-provider: ${errorMessage(error)}`;
      writeJson(
        res,
        status,
        api === 'anthropic' ? anthropicError(status, message) : openaiError(status, message),
        api,
      );
    }
  };

  const server = createServer((req, res) => {
    void handle(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve, reject) => {
        // The SDKs' fetch keeps connections alive; without this close() would wait for them to idle out.
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

/**
 * Environment that points the AI SDK's default providers at the fake.
 *
 * Found in the providers' source: `createAnthropic()` reads ANTHROPIC_BASE_URL and `createOpenAI()` reads
 * OPENAI_BASE_URL (via `loadOptionalSetting`, only when no `baseURL` option is given) and use the value as the
 * prefix before `/messages` and `/chat/completions`, so both must already end in `/v1`. Only the bare
 * `https://api.anthropic.com` gets `/v1` added; that differs from Anthropic's own SDK and Claude Code, which
 * append `/v1` to ANTHROPIC_BASE_URL themselves. The base URL is read once, when the provider is created, so the
 * default `anthropic`/`openai` instances keep whatever the environment held when the package was first imported;
 * the API keys, by contrast, are read again on every request. `createOpenAICompatible()` reads no environment.
 */
export function providerEnv(fake: Pick<FakeProvider, 'url'>): {
  ANTHROPIC_API_KEY: string;
  ANTHROPIC_BASE_URL: string;
  OPENAI_API_KEY: string;
  OPENAI_BASE_URL: string;
} {
  return {
    ANTHROPIC_API_KEY: 'test',
    ANTHROPIC_BASE_URL: fake.url,
    OPENAI_API_KEY: 'test',
    OPENAI_BASE_URL: fake.url,
  };
}

/**
 * The tool results a request carried, in order, whichever API it came on: Anthropic's `tool_result` blocks in
 * user messages and OpenAI's `role: "tool"` messages. Block-array contents are flattened to their text.
 */
export function toolResults(request: FakeRequest): Array<{ toolCallId: string; content: string }> {
  const out: Array<{ toolCallId: string; content: string }> = [];
  for (const message of request.messages) {
    if (request.api === 'openai') {
      const id = message.tool_call_id;
      if (message.role === 'tool' && typeof id === 'string') {
        out.push({ toolCallId: id, content: textOf(message.content) });
      }
    } else if (Array.isArray(message.content)) {
      for (const block of message.content) {
        if (isRecord(block) && block.type === 'tool_result' && typeof block.tool_use_id === 'string') {
          out.push({ toolCallId: block.tool_use_id, content: textOf(block.content) });
        }
      }
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Requests

function flattenHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

function checkAuth(api: FakeApi, headers: Record<string, string>): void {
  const bearer = /^Bearer\s+\S/i.test(headers.authorization ?? '');
  if (api === 'anthropic') {
    // The SDK sends `Authorization: Bearer` instead of `x-api-key` when given `authToken`; the API accepts both.
    if (!headers['x-api-key']?.trim() && !bearer) throw new HttpError(401, 'x-api-key header is required');
  } else if (!bearer) {
    throw new HttpError(
      401,
      "You didn't provide an API key. You need to provide your API key in an Authorization header using Bearer auth (i.e. Authorization: Bearer YOUR_KEY).",
    );
  }
}

async function readJson(req: IncomingMessage): Promise<{ raw: Json; text: string }> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new HttpError(400, `fake-provider: request body is not JSON: ${text.slice(0, 200)}`);
  }
  if (!isRecord(body)) throw new HttpError(400, 'fake-provider: request body must be a JSON object');
  return { raw: body, text };
}

function anthropicRequest(raw: Json, headers: Record<string, string>): Omit<FakeRequest, 'body'> {
  const system = raw.system;
  return {
    api: 'anthropic',
    model: String(raw.model ?? ''),
    // The SDK sends `system` as an array of text blocks; the API also takes a plain string.
    system: typeof system === 'string' ? system : textOf(system),
    messages: asMessages(raw.messages),
    tools: asArray(raw.tools).map((tool) => ({
      name: String(tool.name ?? ''),
      ...(typeof tool.description === 'string' && { description: tool.description }),
      parameters: tool.input_schema,
    })),
    stream: raw.stream === true,
    raw,
    headers,
  };
}

function openaiRequest(raw: Json, headers: Record<string, string>): Omit<FakeRequest, 'body'> {
  const all = asMessages(raw.messages);
  const isSystem = (m: { role: string }) => m.role === 'system' || m.role === 'developer';
  return {
    api: 'openai',
    model: String(raw.model ?? ''),
    system: all
      .filter(isSystem)
      .map((m) => textOf(m.content))
      .join('\n'),
    messages: all.filter((m) => !isSystem(m)),
    tools: asArray(raw.tools).map((tool) => {
      const fn = isRecord(tool.function) ? tool.function : {};
      return {
        name: String(fn.name ?? ''),
        ...(typeof fn.description === 'string' && { description: fn.description }),
        parameters: fn.parameters,
      };
    }),
    stream: raw.stream === true,
    raw,
    headers,
  };
}

function asArray(value: unknown): Json[] {
  return Array.isArray(value) ? value.filter(isRecord) : [];
}

function asMessages(value: unknown): FakeRequest['messages'] {
  return asArray(value).map((m) => ({ ...m, role: String(m.role ?? ''), content: m.content }));
}

/** A string, or the `text` of an array of content parts. */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part) => (isRecord(part) && typeof part.text === 'string' ? part.text : ''))
    .filter(Boolean)
    .join('\n');
}

// ---------------------------------------------------------------------------------------------------------------
// Replies

interface Reply {
  model: string;
  index: number;
  text: string;
  thinking?: string;
  streamError?: { type: string; message: string };
  toolCalls: Array<{ id: string; name: string; arguments: string; input: unknown }>;
  finish: 'stop' | 'tool_calls' | 'length';
  /** `input`: as the API reports it (Anthropic: the uncached part; OpenAI: all of it, cached included). */
  usage: { input: number; output: number; cacheRead: number; cacheWrite: number };
}

function resolveTurn(turn: FakeTurn, request: FakeRequest, index: number, cached: CacheUsage): Reply {
  const prefix = request.api === 'anthropic' ? 'toolu_fake' : 'call_fake';
  const toolCalls = (turn.toolCalls ?? []).map((call, n) => ({
    id: call.id ?? `${prefix}_${index}_${n}`,
    name: call.name,
    input: call.input ?? {},
    arguments: JSON.stringify(call.input ?? {}),
  }));
  const text = turn.text ?? '';
  const outputChars = text.length + toolCalls.reduce((sum, c) => sum + c.name.length + c.arguments.length, 0);
  // A prompt of at least one token; on Anthropic the part the cache neither served nor took (0 when it did it all).
  const total = Math.max(1, cached.total);
  const simulated = {
    input: request.api === 'anthropic' ? total - cached.read - cached.written : total,
    cacheRead: cached.read,
    cacheWrite: cached.written,
  };
  return {
    model: request.model,
    index,
    text,
    ...(turn.thinking !== undefined && { thinking: turn.thinking }),
    ...(turn.streamError && { streamError: turn.streamError }),
    toolCalls,
    finish: turn.finish ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
    usage: turn.usage
      ? { cacheRead: 0, cacheWrite: 0, ...turn.usage }
      : { ...simulated, output: Math.max(1, Math.ceil(outputChars / 4)) },
  };
}

/** The signature the fake puts on its thinking blocks (Anthropic's are opaque base64). */
export const FAKE_SIGNATURE = 'c2lnbmVkLWJ5LXRoZS1mYWtl';

const ANTHROPIC_STOP = { stop: 'end_turn', tool_calls: 'tool_use', length: 'max_tokens' } as const;

function anthropicContent(reply: Reply): Json[] {
  return [
    ...(reply.thinking !== undefined
      ? [{ type: 'thinking', thinking: reply.thinking, signature: FAKE_SIGNATURE }]
      : []),
    ...(reply.text ? [{ type: 'text', text: reply.text }] : []),
    ...reply.toolCalls.map((c) => ({ type: 'tool_use', id: c.id, name: c.name, input: c.input })),
  ];
}

function anthropicMessage(reply: Reply): Json {
  return {
    id: `msg_fake_${reply.index}`,
    type: 'message',
    role: 'assistant',
    model: reply.model,
    content: anthropicContent(reply),
    stop_reason: ANTHROPIC_STOP[reply.finish],
    stop_sequence: null,
    usage: anthropicUsage(reply, reply.usage.output),
  };
}

function anthropicUsage(reply: Reply, output: number): Json {
  return {
    input_tokens: reply.usage.input,
    cache_creation_input_tokens: reply.usage.cacheWrite,
    cache_read_input_tokens: reply.usage.cacheRead,
    output_tokens: output,
  };
}

function anthropicEvents(reply: Reply): Json[] {
  const events: Json[] = [
    {
      type: 'message_start',
      message: {
        ...anthropicMessage(reply),
        content: [],
        stop_reason: null,
        // The API reports a placeholder output count here and the real one in `message_delta`.
        usage: anthropicUsage(reply, 1),
      },
    },
    { type: 'ping' },
  ];
  let index = 0;
  if (reply.thinking !== undefined) {
    events.push(
      {
        type: 'content_block_start',
        index,
        content_block: { type: 'thinking', thinking: '', signature: '' },
      },
      { type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: reply.thinking } },
      { type: 'content_block_delta', index, delta: { type: 'signature_delta', signature: FAKE_SIGNATURE } },
      { type: 'content_block_stop', index },
    );
    index++;
  }
  if (reply.text) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const text of pieces(reply.text)) {
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
    }
    events.push({ type: 'content_block_stop', index });
    index++;
  }
  for (const call of reply.toolCalls) {
    events.push({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    for (const partial_json of ['', ...pieces(call.arguments)]) {
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } });
    }
    events.push({ type: 'content_block_stop', index });
    index++;
  }
  if (reply.streamError) {
    events.push({ type: 'error', error: reply.streamError });
    return events;
  }
  events.push(
    {
      type: 'message_delta',
      delta: { stop_reason: ANTHROPIC_STOP[reply.finish], stop_sequence: null },
      // The API repeats the input figures here, cumulative, with the final output count.
      usage: anthropicUsage(reply, reply.usage.output),
    },
    { type: 'message_stop' },
  );
  return events;
}

function openaiUsage(reply: Reply): Json {
  return {
    prompt_tokens: reply.usage.input,
    completion_tokens: reply.usage.output,
    total_tokens: reply.usage.input + reply.usage.output,
    prompt_tokens_details: { cached_tokens: reply.usage.cacheRead, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function openaiCompletion(reply: Reply): Json {
  return {
    id: `chatcmpl-fake${reply.index}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: reply.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: reply.text || null,
          refusal: null,
          ...(reply.toolCalls.length > 0 && {
            tool_calls: reply.toolCalls.map((c) => ({
              id: c.id,
              type: 'function',
              function: { name: c.name, arguments: c.arguments },
            })),
          }),
          annotations: [],
        },
        logprobs: null,
        finish_reason: reply.finish,
      },
    ],
    usage: openaiUsage(reply),
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
  };
}

function openaiChunks(reply: Reply, includeUsage: boolean): Json[] {
  const chunk = (choices: Json[]): Json => ({
    id: `chatcmpl-fake${reply.index}`,
    object: 'chat.completion.chunk',
    created: Math.floor(Date.now() / 1000),
    model: reply.model,
    service_tier: 'default',
    system_fingerprint: 'fp_fake',
    choices,
    ...(includeUsage && { usage: null }),
  });
  const delta = (d: Json, finish: string | null = null): Json =>
    chunk([{ index: 0, delta: d, logprobs: null, finish_reason: finish }]);

  // Like the API: the role chunk opens with `content: ""` for text and `content: null` for a pure tool call.
  const chunks: Json[] = [delta({ role: 'assistant', content: reply.text ? '' : null, refusal: null })];
  for (const content of pieces(reply.text)) chunks.push(delta({ content }));
  reply.toolCalls.forEach((call, index) => {
    chunks.push(
      delta({
        tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: '' } }],
      }),
    );
    for (const args of pieces(call.arguments)) {
      chunks.push(delta({ tool_calls: [{ index, function: { arguments: args } }] }));
    }
  });
  chunks.push(delta({}, reply.finish));
  if (includeUsage) chunks.push({ ...chunk([]), usage: openaiUsage(reply) });
  return chunks;
}

/** Splits into up to three pieces on code-point boundaries, so a client must reassemble across events. */
function pieces(text: string): string[] {
  const chars = Array.from(text);
  if (chars.length === 0) return [];
  const size = Math.ceil(chars.length / 3);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// Errors

const ANTHROPIC_ERROR_TYPES: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  402: 'billing_error',
  403: 'permission_error',
  404: 'not_found_error',
  413: 'request_too_large',
  429: 'rate_limit_error',
  500: 'api_error',
  504: 'timeout_error',
  529: 'overloaded_error',
};

function anthropicError(status: number, message: string): Json {
  const type = ANTHROPIC_ERROR_TYPES[status] ?? (status >= 500 ? 'api_error' : 'invalid_request_error');
  return { type: 'error', error: { type, message }, request_id: 'req_fake' };
}

function openaiError(status: number, message: string): Json {
  const type = status === 429 ? 'requests' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return { error: { message, type, param: null, code: status === 429 ? 'rate_limit_exceeded' : null } };
}

// ---------------------------------------------------------------------------------------------------------------
// HTTP

function responseHeaders(api: FakeApi): Record<string, string> {
  // `retry-after-ms: 0` makes the AI SDK's built-in retries (2 by default, 2s then 4s apart) immediate, so a test
  // that scripts an error, or runs off the end of its script, fails in milliseconds rather than seconds.
  return {
    'retry-after-ms': '0',
    ...(api === 'anthropic' ? { 'request-id': 'req_fake' } : { 'x-request-id': 'req_fake' }),
  };
}

function writeJson(res: ServerResponse, status: number, body: Json, api: FakeApi): void {
  const payload = JSON.stringify(body);
  res.writeHead(status, {
    ...responseHeaders(api),
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}

function writeSse(res: ServerResponse, events: Json[], openai: boolean): void {
  res.writeHead(200, {
    ...responseHeaders(openai ? 'openai' : 'anthropic'),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  for (const event of events) {
    // Anthropic names every event; OpenAI sends bare `data:` lines and ends with a `[DONE]` sentinel.
    res.write(
      openai
        ? `data: ${JSON.stringify(event)}\n\n`
        : `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`,
    );
  }
  if (openai) res.write('data: [DONE]\n\n');
  res.end();
}

function isRecord(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
