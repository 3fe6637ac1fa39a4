import { TackError } from '../../errors.js';
import { type SecretMasker, SHAPE_MASKER } from '../../util/secrets.js';
import {
  type AuditColumns,
  type AuditEntry,
  type AuditFilter,
  type AuditLog,
  type AuditRow,
  auditEntry,
  auditRow,
} from '../audit.js';
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

interface Waiting {
  row: AuditRow;
  resolve(): void;
  reject(error: unknown): void;
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

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /** Rows recorded and not yet sent to the database (at most MAX_WAITING_ROWS). */
  get waiting(): number {
    return this.#queue.length;
  }

  addSecrets(values: Iterable<string>): void {
    this.#secrets = this.#secrets.with(values);
  }

  record(entry: AuditEntry): Promise<void> {
    if (this.#queue.length >= MAX_WAITING_ROWS)
      return Promise.reject(
        new TackError(
          'STORE_FAILED',
          `${this.#db.location}: ${MAX_WAITING_ROWS} audit rows already wait for the database; this one is not written`,
        ),
      );
    const row = auditRow(entry, this.#secrets);
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () =>
          reject(
            new TackError(
              'STORE_FAILED',
              `${this.#db.location}: the audit row was not committed within ${AUDIT_COMMIT_WAIT_MS / 1000} s (it is written if the database answers before the store closes)`,
            ),
          ),
        AUDIT_COMMIT_WAIT_MS,
      );
      timer.unref();
      const settled = () => clearTimeout(timer);
      this.#queue.push({
        row,
        resolve: () => {
          settled();
          resolve();
        },
        reject: (error) => {
          settled();
          reject(error);
        },
      });
      this.#flushing ??= this.#flush();
    });
  }

  /** Writes batches until nothing waits; one at a time, so the next batch gathers what came meanwhile. */
  async #flush(): Promise<void> {
    try {
      while (this.#queue.length > 0) {
        const batch = this.#queue.splice(0, MAX_BATCH);
        try {
          const values = batch.map(
            (_, i) => `(${Array.from({ length: 8 }, (_, j) => `$${i * 8 + j + 1}`).join(', ')})`,
          );
          await this.#db.query(
            `INSERT INTO audit (at, client, server, tool, args_sha256, duration_ms, outcome, detail) VALUES ${values.join(', ')}`,
            batch.flatMap((w) => w.row),
          );
          for (const w of batch) w.resolve();
        } catch (error) {
          for (const w of batch) w.reject(error);
        }
      }
    } finally {
      this.#flushing = undefined;
    }
  }

  /**
   * Fails every row still waiting (a store closing on a database that does not answer): their calls were answered
   * already, after AUDIT_COMMIT_WAIT_MS; writing them would take one timed-out batch of 500 after another.
   */
  abandon(reason: string): void {
    const error = new TackError('STORE_FAILED', `${this.#db.location}: ${reason}`);
    for (const w of this.#queue.splice(0)) w.reject(error);
  }

  /** Resolves when every row recorded so far is written (or failed). */
  async drain(): Promise<void> {
    while (this.#flushing) await this.#flushing;
  }

  flush(): Promise<void> {
    return this.drain();
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
