import { createWriteStream, mkdirSync, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { LineMasker, type SecretMasker, SHAPE_MASKER } from '../util/secrets.js';

const TAIL_LINES = 20;
/** A line longer than this is written out before its end arrives, so a server cannot make tack buffer forever. */
const MAX_PARTIAL_CHARS = 64 * 1024;

/**
 * One server's log file (`<state>/logs/<server>.log`): its stderr and tack's own notes about it (starts,
 * exits, stdout noise). The last lines are also kept in memory, so a failure report can quote them.
 *
 * Secrets are masked before anything is written or kept: the server's own configured values (its `env` and
 * `headers`, given as `secrets`) and key shapes (util/secrets.ts). Masking needs whole lines (a key split across
 * two chunks would escape it), so stderr is written line by line; an unfinished line is written when its end
 * arrives, before tack's next note, at a restart, or at close.
 */
export class ServerLog {
  readonly file: string | undefined;
  readonly #stream: WriteStream | undefined;
  readonly #tail: string[] = [];
  readonly #secrets: SecretMasker;
  readonly #lines: LineMasker;
  #decoder = new StringDecoder('utf8');
  #partial = '';
  #lineListener: ((line: string) => void) | undefined;

  constructor(server: string, logDir: string | undefined, secrets: SecretMasker = SHAPE_MASKER) {
    this.#secrets = secrets;
    this.#lines = new LineMasker(secrets);
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
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop() ?? '';
    const written: string[] = [];
    for (const line of lines) {
      const masked = this.#lines.line(line);
      if (masked === undefined) continue;
      this.#stream?.write(`${masked}\n`);
      this.#remember(masked);
      written.push(masked);
    }
    if (this.#partial.length > MAX_PARTIAL_CHARS) this.#flushPartial(false);
    // After the chunk is written: a listener's notes must not split the partial line it leaves.
    if (this.#lineListener) for (const line of written) this.#lineListener(line);
  }

  /** Called with every complete stderr line (masked) after it is written: the sandbox explains refusals. */
  onStderrLine(listener: ((line: string) => void) | undefined): void {
    this.#lineListener = listener;
  }

  /** A line written by tack about the server (not by the server). */
  note(message: string): void {
    this.#flushPartial(false);
    const line = `[tack ${new Date().toISOString()}] ${this.#secrets.maskText(message)}`;
    this.#stream?.write(`${line}\n`);
  }

  /** The server's last stderr lines, oldest first (the unterminated last line included), masked. */
  tail(): string[] {
    const partial = this.#partial ? this.#lines.peek(this.#partial) : undefined;
    const lines = partial ? [...this.#tail, partial] : [...this.#tail];
    return lines.filter((line) => line.trim() !== '').slice(-TAIL_LINES);
  }

  /** The tail as error details: a heading and the lines, or nothing when the server said nothing. */
  details(): string[] {
    const tail = this.tail();
    return tail.length ? ['last stderr lines:', ...tail] : [];
  }

  /** Forget the tail at a restart, so a report quotes the current process only. */
  resetTail(): void {
    this.#flushPartial();
    this.#tail.length = 0;
    this.#lines.reset();
    this.#decoder = new StringDecoder('utf8');
  }

  close(): Promise<void> {
    this.#flushPartial();
    const stream = this.#stream;
    if (!stream) return Promise.resolve();
    return new Promise((resolve) => stream.end(resolve));
  }

  /**
   * Writes the unfinished last line (masked) on a line of its own. `end`: the stream is over, so a character cut
   * short is written too (mid-stream its next bytes may still come).
   */
  #flushPartial(end = true): void {
    const partial = this.#partial + (end ? this.#decoder.end() : '');
    this.#partial = '';
    if (partial === '') return;
    const masked = this.#lines.line(partial);
    if (masked === undefined) return;
    this.#stream?.write(`${masked}\n`);
    this.#remember(masked);
  }

  #remember(line: string): void {
    this.#tail.push(line.replace(/\r$/, ''));
    if (this.#tail.length > TAIL_LINES) this.#tail.shift();
  }
}
