import { deserializeMessage, type JSONRPCMessage } from '@modelcontextprotocol/client';

/**
 * A drop-in for the SDK's stdio `ReadBuffer` that is linear in the message size. The SDK's copy concatenates
 * the whole buffer on every 64 KB chunk and rescans it from the start for a newline, which is quadratic: a
 * 10 MB tool result took ~4 s to frame on this machine (bench/, docs/benchmarks.md). This one keeps the chunks
 * in a list and scans each byte once. Behaviour is the SDK's: lines that are not JSON are skipped, a JSON line
 * that is not JSON-RPC throws, and a buffer over `maxBufferSize` throws and is cleared.
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
        if (error instanceof SyntaxError) continue; // not JSON: a banner or a stray log line
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
