import { errorMessage, TackError } from '../../errors.js';
import { type SecretMasker, SHAPE_MASKER } from '../../util/secrets.js';
import { sendWarning, type WarningSink } from '../../util/warnings.js';
import {
  type AuditColumns,
  type AuditEntry,
  type AuditFilter,
  type AuditLog,
  type AuditRow,
  auditEntry,
  auditRow,
} from '../audit.js';
import type { AuditSpool } from './audit-spool.js';
import type { PostgresDatabase } from './database.js';

/** Rows per INSERT: 8 parameters each, far under PostgreSQL's 65,535. */
const MAX_BATCH = 500;
/**
 * Rows waiting for the database at most: past that a row is refused at once. A database that stops answering
 * (a partition, a hung server) otherwise collects every call's row, and the call with it, for as long as it is gone.
 */
export const MAX_WAITING_ROWS = 10_000;
/**
 * How long a call waits for its row to commit before it is answered anyway (the row stays queued and is written if
 * the database answers later). A database that answers commits in milliseconds; one that does not must not hold
 * every call of the instance.
 */
export const AUDIT_COMMIT_WAIT_MS = 5_000;

/** How soon a spool is tried again after the database failed it; its replay is also tried after each batch written. */
export const SPOOL_RETRY_MS = 5_000;
/** The spool's warnings come at most this often, with a count of the rows kept meanwhile. */
const SPOOL_WARNING_MS = 10_000;

interface Waiting {
  row: AuditRow;
  /** Taken out of the queue into the spool (its call was answered): the flush skips it. */
  spooled?: boolean;
  /** In an INSERT now: only that INSERT's outcome decides where the row goes. */
  sent?: boolean;
  resolve(): void;
  reject(error: unknown): void;
}

export interface PostgresAuditOptions {
  /** Where rows go when the database cannot take them; without one they are lost (and the call told so). */
  spool?: AuditSpool | undefined;
  onWarning?: WarningSink | undefined;
}

/**
 * The audit log shared by every instance, written by group commit: rows that arrive while one INSERT is in flight
 * wait for it and go together in the next, and each call's promise settles when its own row is committed. Under
 * load that is one round trip per batch, not per call; and the gateway answers a call only after its row is
 * committed, so an instance killed mid-load loses no row of a call it answered.
 */
export class PostgresAuditLog implements AuditLog {
  readonly #db: PostgresDatabase;
  #secrets: SecretMasker = SHAPE_MASKER;
  #queue: Waiting[] = [];
  #flushing: Promise<void> | undefined;
  readonly #spool: AuditSpool | undefined;
  readonly #onWarning: WarningSink | undefined;
  #replaying: Promise<void> | undefined;
  #retry: NodeJS.Timeout | undefined;
  #retryAt = 0;
  #closed = false;
  #spooledUnsaid = 0;
  #spoolWarnedAt = Number.NEGATIVE_INFINITY;

  constructor(db: PostgresDatabase, options: PostgresAuditOptions = {}) {
    this.#db = db;
    this.#spool = options.spool;
    this.#onWarning = options.onWarning;
    // Rows an earlier process or store left in the spool go in now; files still judged alive, when they turn stale.
    this.#lookAgain(0);
  }

  /** Rows recorded and not yet sent to the database (at most MAX_WAITING_ROWS). */
  get waiting(): number {
    return this.#queue.length;
  }

  addSecrets(values: Iterable<string>): void {
    this.#secrets = this.#secrets.with(values);
  }

  record(entry: AuditEntry): Promise<void> {
    const row = auditRow(entry, this.#secrets);
    if (this.#queue.length >= MAX_WAITING_ROWS) {
      if (this.#keep([row])) return Promise.resolve();
      return Promise.reject(
        new TackError(
          'STORE_FAILED',
          `${this.#db.location}: ${MAX_WAITING_ROWS} audit rows already wait for the database${this.#spool ? ' and the local spool is full' : ''}; this one is not written`,
        ),
      );
    }
    return new Promise<void>((resolve, reject) => {
      const waiting: Waiting = {
        row,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      };
      const timer = setTimeout(() => {
        // Not sent yet: it goes to the spool and the call is answered. Sent: the INSERT in flight decides.
        if (!waiting.sent && this.#keep([row])) {
          waiting.spooled = true;
          resolve();
          return;
        }
        reject(
          new TackError(
            'STORE_FAILED',
            `${this.#db.location}: the audit row was not committed within ${AUDIT_COMMIT_WAIT_MS / 1000} s (it is written if the database answers, or kept in the local spool if there is one)`,
          ),
        );
      }, AUDIT_COMMIT_WAIT_MS);
      timer.unref();
      this.#queue.push(waiting);
      this.#flushing ??= this.#flush();
    });
  }

  /** Writes batches until nothing waits; one at a time, so the next batch gathers what came meanwhile. */
  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH).filter((w) => !w.spooled);
        if (batch.length === 0) continue;
        for (const w of batch) w.sent = true;
        try {
          await this.#insert(batch.map((w) => w.row));
        } catch (error) {
          // Rows whose call already gave up waiting were spooled by their timer only if not sent: these were.
          if (this.#keep(batch.map((w) => w.row))) for (const w of batch) w.resolve();
          else for (const w of batch) w.reject(error);
          continue;
        }
        for (const w of batch) w.resolve();
        // The database answers again: the spool goes in now, not at the next retry.
        if (!this.#replaying && this.#spool?.pending()) this.#scheduleReplay(0);
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  async #insert(rows: readonly AuditRow[]): Promise<void> {
    const values = rows.map(
      (_, i) => `(${Array.from({ length: 8 }, (_, j) => `$${i * 8 + j + 1}`).join(', ')})`,
    );
    await this.#db.query(
      `INSERT INTO audit (at, client, server, tool, args_sha256, duration_ms, outcome, detail) VALUES ${values.join(', ')}`,
      // PostgreSQL's text refuses U+0000, which a client's name or an upstream's error may hold: one such row would
      // fail its whole batch, and then every replay of the spool it went to. It is written as U+FFFD.
      rows.flat().map((value) => (typeof value === 'string' ? value.replaceAll('\0', '\uFFFD') : value)),
    );
  }

  /** Puts `rows` in the spool; false when there is none or it is full. Said once per SPOOL_WARNING_MS. */
  #keep(rows: readonly AuditRow[]): boolean {
    if (!this.#spool?.keep(rows)) return false;
    this.#spooledUnsaid += rows.length;
    this.#warnSpool(
      `${this.#db.location} did not take ${this.#spooledUnsaid} audit row(s): kept in ${this.#spool.dir}, written when it answers again`,
    );
    if (!this.#closed) this.#scheduleReplay(SPOOL_RETRY_MS);
    return true;
  }

  /**
   * AUDIT_SPOOLED for rows kept and for retries that failed, at most once per SPOOL_WARNING_MS between them (a
   * retry fails every SPOOL_RETRY_MS through an outage); the rows kept meanwhile are counted in the next one.
   */
  #warnSpool(message: string): void {
    const now = Date.now();
    if (now - this.#spoolWarnedAt < SPOOL_WARNING_MS) return;
    this.#spoolWarnedAt = now;
    this.#spooledUnsaid = 0;
    sendWarning(this.#onWarning, { code: 'AUDIT_SPOOLED', message });
  }

  /** A replay in `ms` when files wait; else one when a file left alone may have become takeable (nextLook). */
  #lookAgain(ms: number): void {
    const spool = this.#spool;
    if (!spool || this.#closed) return;
    if (spool.pending()) this.#scheduleReplay(ms);
    else if (spool.nextLook !== undefined)
      this.#scheduleReplay(Math.max(0, spool.nextLook - Date.now()) + 1_000);
  }

  /** A replay in `ms`, unless one is due sooner already (an earlier timer is kept, a later one moved up). */
  #scheduleReplay(ms: number): void {
    if (this.#closed) return;
    const at = Date.now() + ms;
    if (this.#retry && this.#retryAt <= at) return;
    clearTimeout(this.#retry);
    this.#retryAt = at;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.#startReplay();
    }, ms);
    this.#retry.unref();
  }

  /**
   * The replay under way, or a new one. When it ends, whatever it left is tried again later: rows it put back, and
   * rows kept while it ran (their retry came while it ran, and was this very replay, which had listed its files).
   */
  #startReplay(): Promise<void> {
    this.#replaying ??= this.#replay().finally(() => {
      this.#replaying = undefined;
      this.#lookAgain(SPOOL_RETRY_MS);
    });
    return this.#replaying;
  }

  /** Writes the spool to the database; tried again later when the database fails it. */
  async #replay(): Promise<void> {
    const spool = this.#spool;
    if (!spool || this.#closed) return;
    try {
      const outcome = await spool.replay(
        (rows) => this.#insert(rows),
        () => this.#closed,
      );
      if (outcome.written > 0 || outcome.skipped > 0)
        sendWarning(this.#onWarning, {
          code: 'AUDIT_RECOVERED',
          message: `${outcome.written} audit row(s) from the local spool written to ${this.#db.location}${outcome.skipped > 0 ? `; ${outcome.skipped} line(s) that were not audit rows skipped` : ''}`,
        });
      for (const file of outcome.unreadable)
        sendWarning(this.#onWarning, {
          code: 'AUDIT_FAILED',
          message: `an audit spool file could not be read and was set aside: ${file}; its rows are not written until it is renamed back to end in .jsonl`,
        });
    } catch (error) {
      if (this.#closed) return;
      this.#warnSpool(
        `the local audit spool could not be written to ${this.#db.location} yet (${errorMessage(error)}); tried again every ${SPOOL_RETRY_MS / 1000} s${this.#spooledUnsaid > 0 ? `; ${this.#spooledUnsaid} more row(s) kept meanwhile` : ''}`,
      );
    }
  }

  /**
   * Fails every row still waiting (a store closing on a database that does not answer): their calls were answered
   * already, after AUDIT_COMMIT_WAIT_MS; writing them would take one timed-out batch of 500 after another. With a
   * spool they go there instead, for the next store on this folder to write.
   */
  abandon(reason: string): void {
    const left = this.#queue.splice(0).filter((w) => !w.spooled);
    if (left.length > 0 && this.#keep(left.map((w) => w.row))) {
      for (const w of left) w.resolve();
      return;
    }
    const error = new TackError('STORE_FAILED', `${this.#db.location}: ${reason}`);
    for (const w of left) w.reject(error);
  }

  /** Stops replaying (what is left stays in the spool) and closes the spool. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#retry);
    this.#retry = undefined;
    await this.#replaying;
    this.#spool?.close();
  }

  /** Waits for a replay of the spool to end (started now if rows wait in it); flush() and tests. */
  async replaySpool(): Promise<void> {
    // A replay under way has claimed its files (they no longer look pending): it is waited for, then the rest.
    await this.#replaying;
    if (this.#spool?.pending()) await this.#startReplay();
  }

  /** Resolves when every row recorded so far is written (or failed). */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  /** Writes the rows waiting: the queue's, and the local spool's (rows an outage left there are waiting too). */
  async flush(): Promise<void> {
    await this.drain();
    await this.replaySpool();
  }

  /** The newest entries matching every filter given; `strpos` rather than LIKE, so `%` and `_` are literal. */
  async query(filter: AuditFilter = {}, limit = 200): Promise<AuditEntry[]> {
    await this.drain();
    const rows = await this.#db.query<AuditColumns>(
      `SELECT * FROM audit WHERE ($1 = '' OR server = $1) AND ($2 = '' OR strpos(tool, $2) > 0)
         AND ($3 = '' OR outcome = $3) AND ($4 = '' OR strpos(client, $4) > 0) ORDER BY id DESC LIMIT $5`,
      [filter.server ?? '', filter.tool ?? '', filter.outcome ?? '', filter.client ?? '', limit],
    );
    return rows.map(auditEntry);
  }

  async recent(limit = 50): Promise<AuditEntry[]> {
    await this.drain();
    return (await this.#db.query<AuditColumns>('SELECT * FROM audit ORDER BY id DESC LIMIT $1', [limit])).map(
      auditEntry,
    );
  }
}
