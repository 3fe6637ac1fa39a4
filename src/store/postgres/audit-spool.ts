import { createHash, randomBytes } from 'node:crypto';
import {
  appendFileSync,
  closeSync,
  createReadStream,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  type Stats,
  statSync,
  utimesSync,
} from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { errorMessage } from '../../errors.js';
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
/** A spool file a replay could not read, set aside: no replay takes it again. */
const UNREADABLE = '.unreadable';

/**
 * A writer leaves a file for good once it was not appended to for this long (the next rows start a new one), so a
 * file idle for SPOOL_STALE_MS is never written again, whoever wrote it.
 */
const ROTATE_MS = 60_000;
/** How long a spool file must stay unchanged to be taken, whoever wrote it (see alive()). */
export const SPOOL_STALE_MS = 10 * 60_000;
/**
 * Where this process's pids mean something: its machine and pid namespace, hashed into every spool id. Two
 * containers on one state volume have different ones, even when both run tack as pid 1.
 */
const PLACE = createHash('sha256').update(`${hostname()}\0${pidNamespace()}`).digest('hex').slice(0, 8);

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid'); // Linux: "pid:[4026531836]", one per namespace
  } catch {
    return '';
  }
}

/** The spools of this process that are open: a file of this process whose spool is not among them is orphaned. */
const LIVE = new Set<string>();

/** What a replay did. */
export interface ReplayOutcome {
  /** Rows the database took. */
  written: number;
  /** Lines that were not audit rows (a line cut short by a kill, an edited file): skipped. */
  skipped: number;
  /** Files that could not be read, each with why: renamed to end in `.unreadable`, and left for the operator. */
  unreadable: string[];
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
  readonly #id = `${process.pid}-${PLACE}${randomBytes(6).toString('hex')}`;
  #fd: number | undefined;
  /** When the open file was last appended to: past ROTATE_MS idle the next rows go to a new file. */
  #appendedAt = 0;
  #part = 0;
  /** Bytes appended by this store and not yet written to the database. */
  #bytes = 0;
  #maybePending = true;
  #nextLook: number | undefined;
  #closed = false;
  #recountedAt = Number.NEGATIVE_INFINITY;

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
    // The count is recounted from the folder before refusing: files of this store that another instance took (idle
    // past SPOOL_STALE_MS, from another container) would otherwise hold it full forever.
    if (this.#bytes + size > MAX_SPOOL_BYTES && this.#recount() + size > MAX_SPOOL_BYTES) return false;
    // A file idle for a while is left for good (see SPOOL_STALE_MS): a replayer elsewhere may take it.
    if (this.#fd !== undefined && Date.now() - this.#appendedAt > ROTATE_MS) this.#closeFile();
    try {
      if (this.#fd === undefined) {
        mkdirSync(this.dir, { recursive: true, mode: 0o700 });
        this.#fd = openSync(join(this.dir, `${this.#id}-${this.#part++}${SUFFIX}`), 'a', 0o600);
      }
      appendFileSync(this.#fd, text);
      this.#appendedAt = Date.now();
    } catch {
      // The append may have been cut short (a full disk): the next rows go to a new file, not after the cut line,
      // where they would join it and be skipped as not a row.
      this.#closeFile();
      return false;
    } finally {
      // Closed, its files are orphans that the next store takes: rows kept now (an INSERT that failed as the store
      // closed) each go to a file of their own, never appended through an open descriptor to a file taken meanwhile.
      if (this.#closed) this.#closeFile();
    }
    this.#bytes += size;
    this.#maybePending = true;
    return true;
  }

  /**
   * Whether any file waits that this store would replay. Cheap when nothing was spooled since the last look (it is
   * asked after every batch written): the folder is read at the start, after rows were kept, and once a file left
   * alone at the last look may have become takeable (nextLook). A writer of this namespace that dies is found by
   * its pid at the next look, or by its file's age at the latest.
   */
  pending(): boolean {
    const lookAgain = this.#nextLook !== undefined && Date.now() >= this.#nextLook;
    if (!this.#maybePending && !lookAgain) return false;
    this.#maybePending = this.#takeable().length > 0;
    return this.#maybePending;
  }

  /**
   * When a file this store left alone at its last look (a writer elsewhere, or alive: see alive()) becomes takeable
   * at the latest, if it is not changed meanwhile: a quiet store looks again then, so an instance restarted in a new
   * container writes its old self's rows without waiting for traffic or another start.
   */
  get nextLook(): number | undefined {
    return this.#nextLook;
  }

  /**
   * Writes every file this store may take to the database with `insert`, oldest first. A failure stops the replay
   * and is thrown; `stopped` is asked between batches (a store that closes) and stops it the same way. The file under
   * way is then given back as it was when none of its rows went in (the usual case while the database is down: a
   * retry costs one batch, not a rewrite of the spool), else its rows not written go to a file of the same writer.
   * Rows already on disk are never dropped, whatever this store's bound: they use no more disk than they did.
   */
  async replay(insert: (rows: AuditRow[]) => Promise<void>, stopped: () => boolean): Promise<ReplayOutcome> {
    // New rows go to a new file from now on: the files taken are complete.
    this.#closeFile();
    const outcome: ReplayOutcome = { written: 0, skipped: 0, unreadable: [] };
    for (const name of this.#takeable()) {
      const writer = name.replace(/\.replaying-.*$/, '').replace(SUFFIX, '');
      const claimed = join(this.dir, `${writer}${CLAIMED}-${this.#id}`);
      let stat: Stats;
      try {
        renameSync(join(this.dir, name), claimed);
        stat = statSync(claimed);
      } catch {
        continue; // another replayer took it first
      }
      await this.#replayFile(claimed, writer, stat, insert, stopped, outcome);
    }
    return outcome;
  }

  /** One claimed file: written and removed, or given back (whole or its rest) and the failure thrown. */
  async #replayFile(
    claimed: string,
    writer: string,
    { size, atime, mtime }: Stats,
    insert: (rows: AuditRow[]) => Promise<void>,
    stopped: () => boolean,
    outcome: ReplayOutcome,
  ): Promise<void> {
    const own = writer.startsWith(`${this.#id}-`);
    const input = createReadStream(claimed, 'utf8');
    const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
    let written = 0;
    let failure: unknown;
    let unreadable: unknown;
    let batch: AuditRow[] = [];
    let texts: string[] = [];
    // Where the rows not written go when some of the file's were: a file of the same writer's.
    // Named for the writer's file, not the copy's (a copy of a copy would lengthen the name at each failure).
    const rest = new RestCopy(
      join(this.dir, `${writer.replace(/(-r[0-9a-f]{12})+$/, '')}-r${randomBytes(6).toString('hex')}`),
    );
    // Claimed, it is kept fresh: a replayer of another pid namespace judges the claim by the file's time alone.
    const touch = () => {
      try {
        utimesSync(claimed, new Date(), new Date());
      } catch {
        // taken meanwhile (this replayer was judged gone): at least once
      }
    };
    touch();
    const send = async () => {
      touch();
      if (stopped()) failure = new Error('the store closed during the replay');
      else
        try {
          await insert(batch);
          written += batch.length;
        } catch (error) {
          failure = error ?? new Error('the INSERT failed');
        }
      if (failure !== undefined && written > 0) rest.add(texts.join(''));
      batch = [];
      texts = [];
    };
    try {
      for await (const line of lines) {
        if (failure !== undefined) {
          // Nothing of it went in: it goes back whole, unread. Else its rows not written are copied.
          if (written === 0) break;
          if (parseRow(line)) rest.add(`${line}\n`);
          continue;
        }
        if (line.trim() === '') continue;
        const row = parseRow(line);
        if (!row) {
          outcome.skipped++;
          continue;
        }
        batch.push(row);
        texts.push(`${line}\n`);
        if (batch.length >= REPLAY_BATCH) await send();
      }
      if (failure === undefined && batch.length > 0) await send();
    } catch (error) {
      unreadable = error;
    } finally {
      lines.close();
      input.destroy();
    }
    outcome.written += written;
    if (unreadable !== undefined) {
      // Not a spool this store can read (a damaged disk, a file it may not read): set aside for the operator under
      // a name no replay takes, so it neither blocks the files after it nor fails every retry.
      rest.discard();
      const aside = join(this.dir, `${writer}-${randomBytes(4).toString('hex')}${UNREADABLE}`);
      try {
        renameSync(claimed, aside);
      } catch {
        // left claimed: taken again once this store is gone
      }
      outcome.unreadable.push(`${aside} (${errorMessage(unreadable)})`);
      if (own) this.#bytes = Math.max(0, this.#bytes - size);
      if (failure !== undefined) throw failure;
      return;
    }
    if (failure === undefined) {
      rmSync(claimed, { force: true });
      if (own) this.#bytes = Math.max(0, this.#bytes - size);
      return;
    }
    this.#maybePending = true;
    const copied = written > 0 ? rest.keep() : undefined;
    if (copied !== undefined) {
      rmSync(claimed, { force: true });
      if (own) this.#bytes = Math.max(0, this.#bytes - size + copied);
      throw failure;
    }
    // Nothing of it went in, or its rest could not be copied: the file goes back whole, as it was (its rows written
    // already, if any, are written again: at least once).
    rest.discard();
    try {
      utimesSync(claimed, atime, mtime); // its place among the files, and its age, as they were
      renameSync(claimed, join(this.dir, `${writer}${SUFFIX}`));
    } catch {
      // left claimed: taken again once this store is gone
    }
    throw failure;
  }

  /** Stops writing; its files stay for the next store on this folder to replay. */
  close(): void {
    this.#closed = true;
    this.#closeFile();
    LIVE.delete(this.#id);
  }

  /** This store's bytes on disk, counted again (its files, kept or claimed, whole or copied); the new count. */
  #recount(): number {
    // Once a second at most: a full spool refuses every row of a flood, and each would read the folder.
    if (Date.now() - this.#recountedAt < 1_000) return this.#bytes;
    this.#recountedAt = Date.now();
    let bytes = 0;
    try {
      for (const name of readdirSync(this.dir))
        if (name.startsWith(`${this.#id}-`) && !name.endsWith(UNREADABLE))
          try {
            bytes += lstatSync(join(this.dir, name)).size;
          } catch {
            // gone meanwhile
          }
    } catch {
      return this.#bytes; // the folder cannot be read: the count stands
    }
    this.#bytes = bytes;
    return bytes;
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
    this.#nextLook = undefined;
    for (const name of names) {
      const writer = /^(\d+)-([0-9a-f]+)-/.exec(name);
      const claimer = /\.replaying-(\d+)-([0-9a-f]+)$/.exec(name);
      const by = claimer ?? (name.endsWith(SUFFIX) ? writer : null);
      if (!by?.[1] || !by[2]) continue;
      let stat: Stats;
      try {
        // Not followed: a symlink (or a directory) named like a spool file is not one, whatever it points to.
        stat = lstatSync(join(this.dir, name));
      } catch {
        continue; // gone meanwhile: another replayer took it
      }
      // No store writes a file past the bound: a bigger one is not a spool, and reading it could exhaust memory.
      if (!stat.isFile() || stat.size > MAX_SPOOL_BYTES) continue;
      const id = `${by[1]}-${by[2]}`;
      if ((claimer || id !== this.#id) && alive(Number(by[1]), by[2], id, stat.mtimeMs)) {
        const stale = stat.mtimeMs + SPOOL_STALE_MS;
        if (this.#nextLook === undefined || stale < this.#nextLook) this.#nextLook = stale;
        continue;
      }
      files.push({ name, at: stat.mtimeMs });
    }
    return files.sort((a, b) => a.at - b.at).map((f) => f.name);
  }
}

/**
 * The rows of a file that a replay did not write, copied to a new file of the same writer: written under a temporary
 * name and renamed only once complete, so no replayer ever takes half a copy.
 */
class RestCopy {
  readonly #base: string;
  #fd: number | undefined;
  #bytes = 0;
  #broken = false;

  constructor(base: string) {
    this.#base = base;
  }

  add(text: string): void {
    if (this.#broken || text === '') return;
    try {
      this.#fd ??= openSync(`${this.#base}.tmp`, 'wx', 0o600);
      appendFileSync(this.#fd, text);
      this.#bytes += Buffer.byteLength(text);
    } catch {
      this.#broken = true;
    }
  }

  /** The copy in place, its size; undefined when it could not be written whole (it is then removed). */
  keep(): number | undefined {
    if (this.#fd === undefined || this.#broken) return undefined;
    try {
      closeSync(this.#fd);
      this.#fd = undefined;
      renameSync(`${this.#base}.tmp`, `${this.#base}${SUFFIX}`);
      return this.#bytes;
    } catch {
      this.#broken = true;
      return undefined;
    }
  }

  discard(): void {
    if (this.#fd !== undefined) closeSync(this.#fd);
    this.#fd = undefined;
    rmSync(`${this.#base}.tmp`, { force: true });
  }
}

/**
 * Whether the spool `id` (process `pid`, random part `hex`) may still write to a file last changed at `mtimeMs`.
 * Never once it is unchanged for SPOOL_STALE_MS: a writer starts a new file after ROTATE_MS idle, and a replayer
 * touches its claim before each batch, so such a file is not written again by anyone (this covers a dead writer
 * whose pid went to another process). Else: a live spool of this process, or another live process. A pid means
 * something only where it was taken: a writer of another machine or pid namespace (a container sharing the state
 * volume, where every tack may be pid 1) is judged by its file's age alone. Ids without a place (the first spool
 * files written) are judged by their pid.
 */
function alive(pid: number, hex: string, id: string, mtimeMs: number): boolean {
  if (Date.now() - mtimeMs >= SPOOL_STALE_MS) return false;
  if (hex.length === PLACE.length + 12 && !hex.startsWith(PLACE)) return true;
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
    // duration_ms is an INTEGER column: any other number would fail its batch on every replay.
    typeof duration !== 'number' ||
    !Number.isInteger(duration) ||
    Math.abs(duration) > 2_147_483_647
  )
    return undefined;
  if (detail !== null && typeof detail !== 'string') return undefined;
  return value as AuditRow;
}
