import {
  closeSync,
  fstatSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { join } from 'node:path';
import { StringDecoder } from 'node:string_decoder';
import { DEFAULT_LIMITS } from '../config/limits.js';
import { LineMasker, type SecretMasker, SHAPE_MASKER } from '../util/secrets.js';

const TAIL_LINES = 20;
/** A line longer than this is written out before its end arrives, so a server cannot make tack buffer forever. */
const MAX_PARTIAL_CHARS = 64 * 1024;
/** `limits.serverLogFiles` allows at most this many; rotated files past the configured count are removed up to it. */
const MAX_ROTATED_FILES = 20;
/** Below this a cap could not even hold tack's own notes; the schema asks for 4 KiB, library callers may not. */
const MIN_LOG_BYTES = 1024;
/** Room kept for the note that says how much of an oversized burst was left out. */
const DROP_NOTE_BYTES = 256;
/** Diagnostics kept per server: the first few say what is wrong; more would only repeat it. */
const MAX_DIAGNOSTICS = 5;

/** How large one server's log may grow (`limits.serverLogBytes`, `limits.serverLogFiles` in tack.json). */
export interface ServerLogLimits {
  /** Size of the current file past which it is rotated. */
  maxBytes: number;
  /** Rotated files kept besides the current one (`<server>.log.1` the newest); 0 keeps only the current file, cut to its newest half. */
  files: number;
}

export const DEFAULT_LOG_LIMITS: Readonly<ServerLogLimits> = Object.freeze({
  maxBytes: DEFAULT_LIMITS.serverLogBytes,
  files: DEFAULT_LIMITS.serverLogFiles,
});

/**
 * One server's log file (`<state>/logs/<project key>/<server>.log`): its stderr and tack's own notes about it (starts,
 * exits, stdout noise). The last lines are also kept in memory, so a failure report can quote them.
 *
 * Secrets are masked before anything is written or kept: the server's own configured values (its `env` and
 * `headers`, given as `secrets`) and key shapes (util/secrets.ts). Masking needs whole lines (a key split across
 * two chunks would escape it), so stderr is written line by line; an unfinished line is written when its end
 * arrives, before tack's next note, at a restart, or at close.
 *
 * The file is capped (`limits`): past `maxBytes` it is rotated (`x.log` -> `x.log.1` -> `x.log.2` ...), so a
 * chatty server costs at most `maxBytes * (files + 1)` of disk, across restarts and runs. Writes are synchronous,
 * one per stderr chunk: a write stream would queue without bound behind a server that writes faster than the
 * disk takes it, and a rotation must not race writes still in flight to the old file.
 */
export class ServerLog {
  readonly file: string | undefined;
  /** Notes a person should see beside the server's state (`tack servers`): each once, the first few only. */
  readonly diagnostics: string[] = [];
  #fd: number | undefined;
  /** Bytes in the current file, as this process knows them (other processes may append too). */
  #size = 0;
  readonly #limits: ServerLogLimits;
  readonly #tail: string[] = [];
  readonly #secrets: SecretMasker;
  readonly #lines: LineMasker;
  #decoder = new StringDecoder('utf8');
  #partial = '';
  #lineListener: ((line: string) => void) | undefined;
  #diagnosed: (() => void) | undefined;

  constructor(
    server: string,
    logDir: string | undefined,
    secrets: SecretMasker = SHAPE_MASKER,
    limits: ServerLogLimits = DEFAULT_LOG_LIMITS,
    /** The project these logs belong to, named in `<logDir>/project`: the folder's name is only a key. */
    project?: string,
  ) {
    this.#secrets = secrets;
    this.#lines = new LineMasker(secrets);
    this.#limits = {
      maxBytes: Math.max(MIN_LOG_BYTES, Math.floor(limits.maxBytes)),
      files: Math.min(MAX_ROTATED_FILES, Math.max(0, Math.floor(limits.files))),
    };
    if (logDir) {
      // A log that cannot be written must not take the host down with it: the tail is kept in memory anyway.
      try {
        mkdirSync(logDir, { recursive: true });
        if (project !== undefined) noteProject(logDir, project);
        this.file = join(logDir, `${server}.log`);
        // Read access too: with no rotated files to keep, rotating means keeping the newest half of this one.
        this.#fd = openSync(this.file, 'a+');
        this.#size = fstatSync(this.#fd).size;
        // A log left over the cap by an earlier run (or an older tack) is rotated before this one adds to it.
        if (this.#size >= this.#limits.maxBytes) this.#rotate();
      } catch {
        this.#disable();
        this.file = undefined;
      }
    }
  }

  /** Raw stderr bytes from the server process. */
  writeStderr(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk);
    const lines = (this.#partial + text).split('\n');
    this.#partial = lines.pop() ?? '';
    let out = '';
    const written: string[] = [];
    for (const line of lines) {
      const masked = this.#lines.line(line);
      if (masked === undefined) continue;
      out += `${masked}\n`;
      this.#remember(masked);
      written.push(masked);
    }
    this.#write(out);
    if (this.#partial.length > MAX_PARTIAL_CHARS) this.#flushPartial(false);
    // After the chunk is written: a listener's notes must not split the partial line it leaves.
    if (this.#lineListener) for (const line of written) this.#lineListener(line);
  }

  /** Called with every complete stderr line (masked) after it is written: the sandbox explains refusals. */
  onStderrLine(listener: ((line: string) => void) | undefined): void {
    this.#lineListener = listener;
  }

  /** Called when a diagnostic is added. */
  onDiagnostic(listener: () => void): void {
    this.#diagnosed = listener;
  }

  /** A note that is also one of the server's diagnostics. */
  diagnose(message: string): void {
    this.note(message);
    if (this.diagnostics.includes(message) || this.diagnostics.length >= MAX_DIAGNOSTICS) return;
    this.diagnostics.push(message);
    this.#diagnosed?.();
  }

  /** A line written by tack about the server (not by the server). */
  note(message: string): void {
    this.#flushPartial(false);
    this.#write(this.#noteLine(this.#secrets.maskText(message)));
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
    // Forgotten before anything else can write: a closed descriptor's number is soon another file's.
    this.#disable();
    return Promise.resolve();
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
    this.#write(`${masked}\n`);
    this.#remember(masked);
  }

  #remember(line: string): void {
    this.#tail.push(line.replace(/\r$/, ''));
    if (this.#tail.length > TAIL_LINES) this.#tail.shift();
  }

  #noteLine(message: string): string {
    return `[tack ${new Date().toISOString()}] ${message}\n`;
  }

  /** Appends whole lines, rotating first when they would take the file past the cap. */
  #write(text: string): void {
    if (this.#fd === undefined || text === '') return;
    let data = Buffer.from(text, 'utf8');
    const { maxBytes } = this.#limits;
    if (this.#size > 0 && this.#size + data.length > maxBytes) this.#rotate();
    if (this.#fd === undefined) return;
    if (this.#size + data.length > maxBytes) {
      // One burst larger than the whole cap: only its newest lines fit, and the file says what was left out.
      const kept = tailOf(data, Math.max(0, maxBytes - this.#size - DROP_NOTE_BYTES));
      const note = this.#noteLine(
        `${data.length - kept.length} bytes of output left out here: one burst over the ${maxBytes}-byte log cap (limits.serverLogBytes)`,
      );
      data = Buffer.concat([Buffer.from(note, 'utf8'), kept]);
    }
    this.#append(data);
  }

  #append(data: Buffer): void {
    if (this.#fd === undefined) return;
    try {
      let written = 0;
      while (written < data.length) written += writeSync(this.#fd, data, written);
      this.#size += data.length;
    } catch {
      this.#disable(); // a full disk or a removed folder: the tail in memory still works
    }
  }

  /**
   * `x.log` -> `x.log.1` -> ... -> `x.log.<files>`, the oldest dropped, and a fresh `x.log`; with no rotated files
   * to keep, the newest half of `x.log` stays in it. A log that cannot be rotated is not written any more: it
   * must not grow past its cap.
   */
  #rotate(): void {
    const file = this.file;
    const fd = this.#fd;
    if (file === undefined || fd === undefined) return;
    const { files, maxBytes } = this.#limits;
    try {
      if (files === 0) {
        const kept = readTail(fd, fstatSync(fd).size, Math.floor(maxBytes / 2));
        ftruncateSync(fd, 0);
        this.#size = 0;
        this.#append(
          Buffer.concat([
            Buffer.from(this.#noteLine(`log cut to its newest ${kept.length} bytes (limits.serverLogBytes)`)),
            kept,
          ]),
        );
      } else {
        // Another tack process writing the same server's log may have rotated it already: then there is a fresh
        // file to write to, and renaming it would throw away what that process just wrote.
        const current = statSync(file, { throwIfNoEntry: false });
        const mine = fstatSync(fd);
        this.#disable();
        if (!current || current.ino !== mine.ino || current.dev !== mine.dev) {
          this.#fd = openSync(file, 'a+');
          this.#size = fstatSync(this.#fd).size;
          if (this.#size < maxBytes) return;
          this.#disable();
        }
        rmSync(`${file}.${files}`, { force: true });
        for (let i = files - 1; i >= 1; i--) renameIfThere(`${file}.${i}`, `${file}.${i + 1}`);
        renameSync(file, `${file}.1`);
        // Over the cap only when written by an older tack or another process: it keeps its newest part.
        keepTail(`${file}.1`, maxBytes);
        this.#fd = openSync(file, 'a+');
        this.#size = fstatSync(this.#fd).size;
        this.#append(
          Buffer.from(
            this.#noteLine(
              `log rotated past ${maxBytes} bytes (limits.serverLogBytes); older lines are in ${file}.1`,
            ),
          ),
        );
      }
      // Left by a run that kept more rotated files (limits.serverLogFiles lowered since).
      for (let i = files + 1; i <= MAX_ROTATED_FILES; i++) rmSync(`${file}.${i}`, { force: true });
    } catch {
      this.#disable();
    }
  }

  #disable(): void {
    const fd = this.#fd;
    this.#fd = undefined;
    if (fd === undefined) return;
    try {
      closeSync(fd);
    } catch {
      // already gone
    }
  }
}

function renameIfThere(from: string, to: string): void {
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
}

/** The last `room` bytes of `data` or fewer, from the start of a line when one starts there, else of a character. */
function tailOf(data: Buffer, room: number): Buffer {
  if (data.length <= room) return data;
  let start = data.length - room;
  if (data[start - 1] !== 0x0a) {
    const newline = data.indexOf(0x0a, start);
    if (newline >= 0 && newline + 1 < data.length) start = newline + 1;
    else while (start < data.length && ((data[start] ?? 0) & 0xc0) === 0x80) start++;
  }
  return data.subarray(start);
}

/** Cuts the file to its newest `maxBytes` (from a line start), when it is larger. */
function keepTail(path: string, maxBytes: number): void {
  const fd = openSync(path, 'r+');
  try {
    const size = fstatSync(fd).size;
    if (size <= maxBytes) return;
    const kept = readTail(fd, size, maxBytes);
    ftruncateSync(fd, 0);
    let written = 0;
    while (written < kept.length) written += writeSync(fd, kept, written, kept.length - written, written);
  } finally {
    closeSync(fd);
  }
}

/** The newest `bytes` of the open file (of `size` bytes), cut as `tailOf` cuts. */
function readTail(fd: number, size: number, bytes: number): Buffer {
  const length = Math.min(size, bytes + 1);
  const buffer = Buffer.alloc(length);
  let read = 0;
  while (read < length) {
    const n = readSync(fd, buffer, read, length - read, size - length + read);
    if (n === 0) break;
    read += n;
  }
  return tailOf(buffer.subarray(0, read), bytes);
}

/** Writes `<logDir>/project` (the project's path, one line) once, so a person can tell the log folders apart. */
function noteProject(logDir: string, project: string): void {
  try {
    // 'wx': never rewritten, so two processes starting at once cannot leave it half written.
    writeFileSync(join(logDir, 'project'), `${project}\n`, { flag: 'wx' });
  } catch {
    // Already there (the usual case), or not writable: the logs themselves matter more.
  }
}
