import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';

const TAIL_LINES = 20;

/**
 * One server's log file (`<state>/logs/<server>.log`): its stderr and tack's own notes about it (starts,
 * exits, stdout noise). The last lines are also kept in memory, so a failure report can quote them.
 */
export class ServerLog {
  readonly file: string | undefined;
  readonly #stream: WriteStream | undefined;
  readonly #tail: string[] = [];
  #partial = '';

  constructor(server: string, logDir: string | undefined) {
    if (logDir) {
      // A log that cannot be written must not take the host down with it: the tail is kept in memory anyway.
      try {
        mkdirSync(logDir, { recursive: true });
        this.file = join(logDir, `${server}.log`);
        this.#stream = createWriteStream(this.file, { flags: 'a' });
        this.#stream.on('error', () => {});
      } catch {
        this.file = undefined;
        this.#stream = undefined;
      }
    }
  }

  /** Raw stderr bytes from the server process. */
  writeStderr(chunk: Buffer | string): void {
    const text = chunk.toString();
    this.#stream?.write(text);
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop() ?? '';
    for (const line of lines) this.#remember(line);
  }

  /** A line written by tack about the server (not by the server). */
  note(message: string): void {
    const line = `[tack ${new Date().toISOString()}] ${message}`;
    this.#stream?.write(`${line}\n`);
  }

  /** The server's last stderr lines, oldest first (the unterminated last line included). */
  tail(): string[] {
    const lines = this.#partial ? [...this.#tail, this.#partial] : [...this.#tail];
    return lines.filter((line) => line.trim() !== '').slice(-TAIL_LINES);
  }

  /** The tail as error details: a heading and the lines, or nothing when the server said nothing. */
  details(): string[] {
    const tail = this.tail();
    return tail.length ? ['last stderr lines:', ...tail] : [];
  }

  /** Forget the tail at a restart, so a report quotes the current process only. */
  resetTail(): void {
    this.#tail.length = 0;
    this.#partial = '';
  }

  close(): Promise<void> {
    const stream = this.#stream;
    if (!stream) return Promise.resolve();
    return new Promise((resolve) => stream.end(resolve));
  }

  #remember(line: string): void {
    this.#tail.push(line.replace(/\r$/, ''));
    if (this.#tail.length > TAIL_LINES) this.#tail.shift();
  }
}
