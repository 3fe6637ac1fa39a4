import { ReadBuffer } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { LinearReadBuffer } from '../../src/mcp/read-buffer.js';

/** Feeds the same bytes, cut at the same places, to tack's buffer and to the SDK's, and collects what each frames. */
function frame(
  buffer: { append(chunk: Buffer): void; readMessage(): unknown },
  bytes: Buffer,
  cuts: number[],
) {
  const out: unknown[] = [];
  let start = 0;
  for (const end of [...cuts, bytes.length]) {
    buffer.append(bytes.subarray(start, end));
    start = end;
    for (let message = buffer.readMessage(); message !== null; message = buffer.readMessage())
      out.push(message);
  }
  return out;
}

describe('LinearReadBuffer', () => {
  const stream = Buffer.from(
    [
      'banner line, not JSON',
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { text: 'ünïcödé ✓' } }),
      '',
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 1, progress: 1 } })}\r`,
      JSON.stringify({ jsonrpc: '2.0', id: 2, result: { text: 'x'.repeat(5000) } }),
      '',
    ].join('\n'),
  );

  it('frames exactly what the SDK buffer frames, however the stream is cut', () => {
    const expected = frame(new ReadBuffer(), stream, []);
    expect(expected).toHaveLength(3);
    for (let seed = 1; seed <= 50; seed++) {
      const cuts: number[] = [];
      for (let at = (seed * 7) % 13; at < stream.length; at += 1 + ((at * seed) % 97)) cuts.push(at);
      expect(frame(new LinearReadBuffer(1 << 20), stream, cuts)).toEqual(expected);
    }
  });

  it('throws on JSON that is not JSON-RPC, like the SDK', () => {
    const buffer = new LinearReadBuffer(1024);
    buffer.append(Buffer.from('{"not":"rpc"}\n'));
    expect(() => buffer.readMessage()).toThrow();
  });

  it('refuses to grow past its limit and starts clean after', () => {
    const buffer = new LinearReadBuffer(10);
    buffer.append(Buffer.from('{"jsonrpc"'));
    expect(() => buffer.append(Buffer.from(':'))).toThrow('ReadBuffer exceeded maximum size of 10 bytes');
    buffer.append(Buffer.from('{"a":1}\n'));
    expect(() => buffer.readMessage()).toThrow(); // a fresh line, not the tail of the dropped one glued to it
  });
});
