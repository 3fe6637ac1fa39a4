import { open } from 'node:fs/promises';

/**
 * The first `max` bytes of a file and its size, never reading more: a file's size on disk says nothing about
 * what it is worth reading, and one 50 MB SKILL.md read whole (then decoded, parsed and token-counted) held
 * `tack skills list` for minutes. `size` is the larger of what fstat says and what was read (a file that grows,
 * or a special file whose size is 0).
 */
export async function readPrefix(path: string, max: number): Promise<{ bytes: Buffer; size: number }> {
  const handle = await open(path, 'r');
  try {
    const { size } = await handle.stat();
    const buffer = Buffer.allocUnsafe(Math.min(max, size > 0 ? size : max));
    let filled = 0;
    while (filled < buffer.length) {
      const { bytesRead } = await handle.read(buffer, filled, buffer.length - filled, filled);
      if (bytesRead === 0) break;
      filled += bytesRead;
    }
    return { bytes: buffer.subarray(0, filled), size: Math.max(size, filled) };
  } finally {
    await handle.close();
  }
}
