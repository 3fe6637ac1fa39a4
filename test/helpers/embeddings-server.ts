/**
 * A local server on 127.0.0.1 that speaks the OpenAI embeddings wire format (`POST /v1/embeddings`, as OpenAI,
 * Ollama, llama.cpp and LM Studio serve it), so tool search's semantic path runs through the unmodified AI SDK
 * providers without a hosted API or model weights.
 *
 * Its "model" is a toy that still behaves like one: every word is mapped to a concept (through `concepts`, else
 * the lower-cased word itself) and hashed into a fixed number of dimensions, so texts that share a concept are
 * close even when they share no word ("dogecoin" and "cryptocurrencies" both mean `crypto`).
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface EmbeddingsServerOptions {
  /** Word (lower case) -> concept. */
  concepts?: Readonly<Record<string, string>>;
  /** Vector size when the request names none (default 64). */
  dimensions?: number;
  /** Answer 503 with OpenAI's error JSON instead of vectors (an endpoint that is down but reachable). */
  failing?: boolean;
}

export interface EmbeddingsRequest {
  model: string;
  input: string[];
  encodingFormat: string | undefined;
  dimensions: number | undefined;
  authorization: string | undefined;
}

export interface EmbeddingsServer {
  /** The base URL, with the `/v1` the providers expect. */
  url: string;
  /** Every well-formed request, in arrival order. */
  requests: EmbeddingsRequest[];
  /** Every text embedded so far, in order (what caching should keep short). */
  readonly texts: string[];
  /** Starts or stops failing with 503. */
  setFailing(failing: boolean): void;
  close(): Promise<void>;
}

const WORD = /[\p{L}\p{N}]+/gu;

function vectorOf(text: string, concepts: Readonly<Record<string, string>>, dims: number): number[] {
  const vector = new Array<number>(dims).fill(0);
  for (const [word] of text.toLowerCase().matchAll(WORD)) {
    const concept = concepts[word] ?? word;
    const bucket = createHash('sha256').update(concept).digest().readUInt32BE(0) % dims;
    vector[bucket]! += 1;
  }
  return vector;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const error = (message: string, type: string) => ({ error: { message, type, param: null, code: null } });

export async function startEmbeddingsServer(
  options: EmbeddingsServerOptions = {},
): Promise<EmbeddingsServer> {
  const requests: EmbeddingsRequest[] = [];
  const texts: string[] = [];
  let failing = options.failing ?? false;
  const server = createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/embeddings')
      return send(res, 404, error(`no route ${req.method} ${req.url}`, 'invalid_request_error'));
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(await readBody(req)) as Record<string, unknown>;
    } catch {
      return send(res, 400, error('body is not JSON', 'invalid_request_error'));
    }
    const input = typeof body.input === 'string' ? [body.input] : body.input;
    if (typeof body.model !== 'string' || !Array.isArray(input) || !input.every((t) => typeof t === 'string'))
      return send(res, 400, error('expected {model, input: string | string[]}', 'invalid_request_error'));
    const dimensions = typeof body.dimensions === 'number' ? body.dimensions : undefined;
    requests.push({
      model: body.model,
      input: input as string[],
      encodingFormat: typeof body.encoding_format === 'string' ? body.encoding_format : undefined,
      dimensions,
      authorization: req.headers.authorization,
    });
    if (failing) return send(res, 503, error('The server is overloaded or not ready yet.', 'server_error'));
    for (const t of input as string[]) texts.push(t);
    const dims = dimensions ?? options.dimensions ?? 64;
    const tokens = (input as string[]).reduce((n, t) => n + (t.match(WORD)?.length ?? 0), 0);
    send(res, 200, {
      object: 'list',
      data: (input as string[]).map((t, index) => ({
        object: 'embedding',
        index,
        embedding: vectorOf(t, options.concepts ?? {}, dims),
      })),
      model: body.model,
      usage: { prompt_tokens: tokens, total_tokens: tokens },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    texts,
    setFailing(value) {
      failing = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
