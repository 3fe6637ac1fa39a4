import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  createReadStream,
  mkdirSync,
  openSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
} from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { AuditRow } from '../audit.js';

/**
 * Bytes one store keeps in its spool at most (about 250,000 rows): past that, rows the database cannot take are
 * lost again, with the warning they had before the spool existed. Bounded so that an outage of days cannot fill
 * the disk the instance also needs.
 */
export const MAX_SPOOL_BYTES = 64 * 1024 * 1024;
/** Rows per INSERT when a spool is replayed. */
const REPLAY_BATCH = 500;
const SUFFIX = '.jsonl';
const CLAIMED = '.replaying';

/** The spools of this process that are open: a file of this process whose spool is not among them is orphaned. */
const LIVE = new Set<string>();

/** What a replay did. */
export interface ReplayOutcome {
  /** Rows the database took. */
  written: number;
  /** Lines that were not audit rows (a line cut short by a kill, an edited file): skipped. */
  skipped: number;
  /** Rows put back in the spool because the database failed again (or the store closed). */
  left: number;
  /** Rows that could be neither written nor put back (the spool full, the disk failing). */
  lost: number;
}

/**
 * The local spool of a PostgreSQL audit log: rows the database could not take (it was down, silent, or the queue
 * was full) are appended here as JSON lines and written to the database when it answers again, so an outage loses
 * no audit row. Each store writes its own file, named for its process and a random id, in a folder per database;
 * a replay takes the store's own files and those whose writer is gone (a process that died, a store that closed),
 * claiming each by renaming it first, so two instances sharing a state folder never write a file twice.
 * Hand-written: no library spools rows for a database; this is append, rename and read lines.
 *
 * A row is written at least once: a batch the database committed but whose answer was lost (a timeout at the
 * wrong moment), or a replay killed between its INSERT and the deletion of the file, is written again.
 */
export class AuditSpool {
  readonly dir: string;
  readonly #id = `${process.pid}-${randomBytes(6).toString('hex')}`;
  #fd: number | undefined;
  #part = 0;
  /** Bytes appended by this store and not yet written to the database. */
  #bytes = 0;
  #maybePending = true;

  constructor(dir: string) {
    this.dir = dir;
    LIVE.add(this.#id);
  }

  /** Rows this store spooled and has not replayed yet, in bytes. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * Appends `rows`; false (nothing kept) when the spool is full or cannot be written. Synchronous: once it returns
   * the rows are in the operating system's hands and survive the process being killed.
   */
  keep(rows: readonly AuditRow[]): boolean {
    const text = rows.map((row) => `${JSON.stringify(row)}\n`).join('');
    const size = Buffer.byteLength(text);
    if (this.#bytes + size > MAX_SPOOL_BYTES) return false;
    try {
      if (this.#fd === undefined) {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        this.#fd = openSync(join(this.dir, `${this.#id}-${this.#part++}${SUFFIX}`), 'a', 0o600);
      }
      appendFileSync(this.#fd, text);
    } catch {
      return false;
    }
    this.#bytes += size;
    this.#maybePending = true;
    return true;
  }

  /**
   * Whether any file waits that this store would replay. Cheap when nothing was spooled since the last look (it is
   * asked after every batch written): the folder is read only at the start and after rows were kept. A writer that
   * dies later is found by the next store that starts on the folder, or when this one spools again.
   */
  pending(): boolean {
    if (!this.#maybePending) return false;
    this.#maybePending = this.#takeable().length > 0;
    return this.#maybePending;
  }

  /**
   * Writes every file this store may take to the database with `insert`, oldest first. A failure stops the replay:
   * the rows not written go back to a spool file of this store's, and the error is thrown. `stopped` is asked
   * between batches (a store that closes): the rest is put back the same way.
   */
  async replay(insert: (rows: AuditRow[]) => Promise<void>, stopped: () => boolean): Promise<ReplayOutcome> {
    // New rows go to a new file from now on: the files taken are complete.
    this.#closeFile();
    const outcome: ReplayOutcome = { written: 0, skipped: 0, left: 0, lost: 0 };
    for (const name of this.#takeable()) {
      const base = name.replace(/\.replaying-.*$/, '').replace(SUFFIX, '');
      const claimed = join(this.dir, `${base}${CLAIMED}-${this.#id}`);
      let size: number;
      try {
        renameSync(join(this.dir, name), claimed);
        size = statSync(claimed).size;
      } catch {
        continue; // another replayer took it first
      }
      // Its bytes leave this store's count now; what is put back is counted again by keep().
      if (name.startsWith(`${this.#id}-`)) this.#bytes = Math.max(0, this.#bytes - size);
      let failure: unknown;
      let batch: AuditRow[] = [];
      const putBack = (rows: AuditRow[]) => {
        if (this.keep(rows)) outcome.left += rows.length;
        else outcome.lost += rows.length;
      };
      const send = async () => {
        const rows = batch;
        batch = [];
        if (failure === undefined && stopped()) failure = new Error('the store closed during the replay');
        if (failure === undefined) {
          try {
            await insert(rows);
            outcome.written += rows.length;
            return;
          } catch (error) {
            failure = error ?? new Error('the INSERT failed');
          }
        }
        putBack(rows);
      };
      const lines = createInterface({
        input: createReadStream(claimed, 'utf8'),
        crlfDelay: Number.POSITIVE_INFINITY,
      });
      for await (const line of lines) {
        if (line.trim() === '') continue;
        const row = parseRow(line);
        if (!row) outcome.skipped++;
        else if (batch.push(row) >= REPLAY_BATCH) await send();
      }
      if (batch.length > 0) await send();
      rmSync(claimed, { force: true });
      if (failure !== undefined) throw failure;
    }
    return outcome;
  }

  /** Stops writing; its files stay for the next store on this folder to replay. */
  close(): void {
    this.#closeFile();
    LIVE.delete(this.#id);
  }

  #closeFile(): void {
    if (this.#fd === undefined) return;
    try {
      closeSync(this.#fd);
    } catch {
      // already closed: nothing was lost, every append was synchronous
    }
    this.#fd = undefined;
  }

  /** This store's files and orphaned ones (their writer is gone), oldest first. */
  #takeable(): string[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const files: Array<{ name: string; at: number }> = [];
    for (const name of names) {
      const writer = /^(\d+)-([0-9a-f]+)-/.exec(name);
      const claimer = /\.replaying-(\d+)-([0-9a-f]+)$/.exec(name);
      let takeable: boolean;
      if (claimer) takeable = !alive(Number(claimer[1]), `${claimer[1]}-${claimer[2]}`);
      else if (name.endsWith(SUFFIX) && writer)
        takeable =
          `${writer[1]}-${writer[2]}` === this.#id || !alive(Number(writer[1]), `${writer[1]}-${writer[2]}`);
      else takeable = false;
      if (!takeable) continue;
      try {
        const stat = statSync(join(this.dir, name));
        // No store writes a file past the bound: a bigger one is not a spool, and reading it could exhaust memory.
        if (stat.isFile() && stat.size <= MAX_SPOOL_BYTES) files.push({ name, at: stat.mtimeMs });
      } catch {
        // gone meanwhile: another replayer took it
      }
    }
    return files.sort((a, b) => a.at - b.at).map((f) => f.name);
  }
}

/** Whether the spool `id` of process `pid` may still write: a live spool of this process, or another live process. */
function alive(pid: number, id: string): boolean {
  if (pid === process.pid) return LIVE.has(id);
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: the process exists, under another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** One spool line as an audit row, or undefined when it is not one (cut short, edited). */
function parseRow(line: string): AuditRow | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (!Array.isArray(value) || value.length !== 8) return undefined;
  const [at, client, server, tool, digest, duration, outcome, detail] = value as unknown[];
  const texts = [at, client, server, tool, digest, outcome];
  if (
    !texts.every((t) => typeof t === 'string') ||
    typeof duration !== 'number' ||
    !Number.isFinite(duration)
  )
    return undefined;
  if (detail !== null && typeof detail !== 'string') return undefined;
  return value as AuditRow;
}
