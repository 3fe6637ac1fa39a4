import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';

/**
 * A drop-in for the SDK's stdio `ReadBuffer` that is linear in the message size. The SDK's copy concatenates
 * the whole buffer on every 64 KB chunk and rescans it from the start for a newline, which is quadratic: a
 * 10 MB tool result took ~4 s to frame on this machine (bench/, docs/benchmarks.md). This one keeps the chunks
 * in a list and scans each byte once. Behaviour is the SDK's: lines that are not JSON are skipped, a JSON line
 * that is not JSON-RPC throws, and a buffer over `maxBufferSize` throws and is cleared; except that an answer
 * (an id, no method) that is not valid JSON-RPC becomes an error answer to its request, which otherwise would
 * wait for its timeout (the SDK only reports the line and drops it).
 */
export class LinearReadBuffer {
  readonly #maxBufferSize: number;
  #chunks: Buffer[] = [];
  #size = 0;
  /** Bytes at the front of the buffer already known to hold no newline. */
  #scanned = 0;

  constructor(maxBufferSize: number) {
    this.#maxBufferSize = maxBufferSize;
  }

  append(chunk: Buffer): void {
    if (this.#size + chunk.length > this.#maxBufferSize) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#maxBufferSize} bytes`);
    }
    this.#chunks.push(chunk);
    this.#size += chunk.length;
  }

  readMessage(): JSONRPCMessage | null {
    for (;;) {
      const newline = this.#findNewline();
      if (newline === -1) return null;
      const line = this.#take(newline).toString('utf8').replace(/\r$/, '');
      try {
        return deserializeMessage(line);
      } catch (error) {
        if (error instanceof SyntaxError) {
          // Not JSON: a banner or a stray log line, unless it is a broken message to one of our requests.
          const broken = brokenAnswer(line);
          if (broken) return broken;
          continue;
        }
        const refused = invalidAnswer(line, error);
        if (refused) return refused;
        throw error;
      }
    }
  }

  clear(): void {
    this.#chunks = [];
    this.#size = 0;
    this.#scanned = 0;
  }

  /** Offset of the first newline in the buffer, scanning only bytes not scanned before; -1 if none yet. */
  #findNewline(): number {
    let base = 0;
    for (const chunk of this.#chunks) {
      const from = Math.max(0, this.#scanned - base);
      if (from < chunk.length) {
        const at = chunk.indexOf(0x0a, from);
        if (at !== -1) return base + at;
      }
      base += chunk.length;
    }
    this.#scanned = this.#size;
    return -1;
  }

  /** Removes `length` bytes and the newline after them; returns the bytes. */
  #take(length: number): Buffer {
    const parts: Buffer[] = [];
    let need = length + 1;
    while (need > 0) {
      const chunk = this.#chunks[0]!;
      if (chunk.length <= need) {
        parts.push(chunk);
        this.#chunks.shift();
        need -= chunk.length;
      } else {
        parts.push(chunk.subarray(0, need));
        this.#chunks[0] = chunk.subarray(need);
        need = 0;
      }
    }
    this.#size -= length + 1;
    this.#scanned = 0;
    const all = parts.length === 1 ? parts[0]! : Buffer.concat(parts, length + 1);
    return all.subarray(0, length);
  }
}

/** An error answer standing in for `line`, when it answers a request (has an id, no method); else undefined. */
function invalidAnswer(line: string, error: unknown): JSONRPCMessage | undefined {
  const message = JSON.parse(line) as unknown;
  if (typeof message !== 'object' || message === null || Array.isArray(message)) return undefined;
  const { id, method } = message as { id?: unknown; method?: unknown };
  if (method !== undefined || (typeof id !== 'string' && typeof id !== 'number')) return undefined;
  // A schema failure's message is a JSON list of issues: the first one says enough.
  const issue = (error as { issues?: Array<{ path?: unknown[]; message?: string }> }).issues?.[0];
  const why = issue
    ? `${issue.path?.length ? `${issue.path.join('.')}: ` : ''}${issue.message ?? 'invalid'}`
    : error instanceof Error
      ? error.message.slice(0, 300)
      : 'invalid';
  return {
    jsonrpc: '2.0',
    id,
    error: { code: -32603, message: `the server's answer is not valid JSON-RPC (${why})` },
  };
}

/** An id where a JSON-RPC answer puts it: `"id":` then a number or a string. */
const ANSWER_ID = /^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,15}|"[^"\\]{0,200}")\s*,/;

/**
 * An error answer for a line that opens like an answer (`{"jsonrpc":"2.0","id":…`) but is not JSON, so its
 * request fails now instead of at its timeout. Only the opening is read: an id elsewhere in the line may be
 * anything a tool put there.
 */
function brokenAnswer(line: string): JSONRPCMessage | undefined {
  const match = ANSWER_ID.exec(line);
  if (!match) return undefined;
  const id = match[1]!.startsWith('"') ? match[1]!.slice(1, -1) : Number(match[1]);
  return { jsonrpc: '2.0', id, error: { code: -32603, message: "the server's answer is not valid JSON" } };
}
