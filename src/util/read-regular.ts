import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';

/**
 * Reads a configuration file as UTF-8, refusing what is not a regular file or is past `maxBytes`. Opened
 * non-blocking and checked on the open descriptor: a FIFO planted at the path (or a link to one) must not hang
 * the reader, and a link to /dev/zero must not be read forever. Errors carry a `code` like fs's own: the
 * system's (ENOENT, EACCES, ...), ENOTREG for a device, FIFO or folder, EFBIG for a file past the cap.
 */
export function readRegularFile(path: string, maxBytes: number): string {
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) throw codedError('ENOTREG', `${path} is not a regular file`);
    if (info.size > maxBytes)
      throw codedError('EFBIG', `${path} is ${info.size} bytes, over the ${maxBytes}-byte limit`);
    const buffer = Buffer.alloc(info.size);
    let read = 0;
    while (read < info.size) {
      const n = readSync(fd, buffer, read, info.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return buffer.toString('utf8', 0, read);
  } finally {
    closeSync(fd);
  }
}

function codedError(code: string, message: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(message);
  error.code = code;
  return error;
}
