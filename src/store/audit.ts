import { type SecretMasker, SHAPE_MASKER } from '../util/secrets.js';
import type { Db } from './database.js';

/** What happened to one call: answered, answered with isError, failed upstream, cancelled, or refused. */
export type AuditOutcome = 'ok' | 'tool-error' | 'failed' | 'cancelled' | 'denied';

export interface AuditEntry {
  /** ISO time the call arrived. */
  at: string;
  /** Who asked: the downstream client's name and version, and the transport. */
  client: string;
  server: string;
  /** The upstream tool name (the server's own, not the namespaced one). */
  tool: string;
  /** SHA-256 of the canonical JSON of the arguments: enough to match calls, without keeping their content. */
  argsSha256: string;
  durationMs: number;
  outcome: AuditOutcome;
  /** The error message for `failed` / `denied`, stored with secrets masked (an upstream error may quote one). */
  detail?: string | undefined;
}

/** Where the gateway writes what it served: the store's `AuditLog`, or a stand-in. */
export interface AuditSink {
  /**
   * Records one call. Resolves when the row is as safe as the engine promises: the SQLite store queues it for
   * its next batch (written within `flushIntervalMs`); the PostgreSQL store resolves once the row is committed,
   * so an instance killed outright loses no row of a call it answered (docs/deploy.md).
   */
  record(entry: AuditEntry): Promise<void>;
}

/** The audit log of calls tack served (the gateway), in the store. */
export interface AuditLog extends AuditSink {
  /** Known secret values (the servers' env and header values) to mask in `detail`, besides key shapes. */
  addSecrets(values: Iterable<string>): void;
  /** Writes every row waiting now (PostgreSQL: its local spool's too). Rejects when the store cannot take them. */
  flush(): Promise<void>;
  /** The newest entries first (waiting rows are written first, so a read sees every call recorded). */
  recent(limit?: number): Promise<AuditEntry[]>;
  /** The newest entries matching every filter given: a server, part of a tool or client name, an outcome. */
  query(filter?: AuditFilter, limit?: number): Promise<AuditEntry[]>;
}

export interface AuditFilter {
  server?: string | undefined;
  tool?: string | undefined;
  outcome?: AuditOutcome | undefined;
  client?: string | undefined;
}

/** The row both engines store: the fields in column order, `detail` masked, the duration whole. */
export type AuditRow = [string, string, string, string, string, number, string, string | null];

export function auditRow(entry: AuditEntry, secrets: SecretMasker): AuditRow {
  return [
    entry.at,
    entry.client,
    entry.server,
    entry.tool,
    entry.argsSha256,
    Math.round(entry.durationMs),
    entry.outcome,
    entry.detail === undefined ? null : secrets.maskText(entry.detail),
  ];
}

export interface AuditColumns {
  at: string;
  client: string;
  server: string;
  tool: string;
  args_sha256: string;
  duration_ms: number;
  outcome: AuditOutcome;
  detail: string | null;
}

export function auditEntry(row: AuditColumns): AuditEntry {
  return {
    at: row.at,
    client: row.client,
    server: row.server,
    tool: row.tool,
    argsSha256: row.args_sha256,
    durationMs: Number(row.duration_ms),
    outcome: row.outcome,
    detail: row.detail ?? undefined,
  };
}

export interface AuditLogOptions {
  /**
   * Rows wait in memory at most this long before one transaction writes them all (default 100 ms): a row per
   * call and a transaction per row cost the gateway more than the call itself. A process killed outright
   * (SIGKILL, OOM) loses the rows still waiting: the calls answered within the last interval. A committed
   * batch survives the process (WAL, synchronous = NORMAL: only a crash of the machine can lose it).
   */
  flushIntervalMs?: number;
  /** Past this many waiting rows a batch is written at once, whatever the timer says (default 256). */
  maxBatch?: number;
}

export const AUDIT_FLUSH_INTERVAL_MS = 100;
const AUDIT_MAX_BATCH = 256;

/**
 * The audit log in the SQLite store. Rows are written in batches off the request path: on a timer, when a batch
 * is full, before any read, and on `flush()` (the store's close, process exit).
 */
export class SqliteAuditLog implements AuditLog {
  readonly #insert;
  readonly #recent;
  readonly #writeBatch: (rows: readonly AuditRow[]) => void;
  readonly #flushIntervalMs: number;
  readonly #maxBatch: number;
  #pending: AuditRow[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #query;
  #secrets: SecretMasker = SHAPE_MASKER;

  constructor(db: Db, options: AuditLogOptions = {}) {
    this.#flushIntervalMs = options.flushIntervalMs ?? AUDIT_FLUSH_INTERVAL_MS;
    this.#maxBatch = options.maxBatch ?? AUDIT_MAX_BATCH;
    this.#insert = db.prepare<AuditRow>(
      'INSERT INTO audit (at, client, server, tool, args_sha256, duration_ms, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#writeBatch = db.transaction((rows: readonly AuditRow[]) => {
      for (const row of rows) this.#insert.run(...row);
    });
    this.#recent = db.prepare<[number], AuditColumns>('SELECT * FROM audit ORDER BY id DESC LIMIT ?');
    // A filter left empty matches everything; `instr` rather than LIKE, so `%` and `_` in a name are literal.
    this.#query = db.prepare<
      [string, string, string, string, string, string, string, string, number],
      AuditColumns
    >(
      `SELECT * FROM audit WHERE (? = '' OR server = ?) AND (? = '' OR instr(tool, ?) > 0)
         AND (? = '' OR outcome = ?) AND (? = '' OR instr(client, ?) > 0) ORDER BY id DESC LIMIT ?`,
    );
  }

  addSecrets(values: Iterable<string>): void {
    this.#secrets = this.#secrets.with(values);
  }

  /** Queues one row; it is written within `flushIntervalMs` (or at once when the batch is full). */
  async record(entry: AuditEntry): Promise<void> {
    this.recordSync(entry);
  }

  /** `record` for callers that cannot wait (the SQLite store's queue is synchronous). */
  recordSync(entry: AuditEntry): void {
    this.#pending.push(auditRow(entry, this.#secrets));
    if (this.#pending.length >= this.#maxBatch) this.flushSync();
    else if (!this.#timer) {
      this.#timer = setTimeout(() => this.#flushQuietly(), this.#flushIntervalMs);
      // The timer must not keep a finished process alive: its exit flushes (flush() on close and on exit).
      this.#timer.unref();
    }
  }

  async flush(): Promise<void> {
    this.flushSync();
  }

  /** Writes every waiting row now, in one transaction. Throws when the store cannot take them (kept for later). */
  flushSync(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    if (this.#pending.length === 0) return;
    const rows = this.#pending;
    this.#pending = [];
    try {
      this.#writeBatch(rows);
    } catch (error) {
      // The rows stay queued (bounded: the oldest go first) for the next flush, which may find the disk back.
      this.#pending = [...rows, ...this.#pending].slice(-this.#maxBatch * 16);
      throw error;
    }
  }

  /** The timer's flush: a failed write (disk full) must not become an uncaught exception of the gateway. */
  #flushQuietly(): void {
    try {
      this.flushSync();
    } catch {
      this.#timer ??= setTimeout(() => this.#flushQuietly(), this.#flushIntervalMs * 10);
      this.#timer.unref();
    }
  }

  async recent(limit = 50): Promise<AuditEntry[]> {
    return this.recentSync(limit);
  }

  recentSync(limit = 50): AuditEntry[] {
    this.flushSync();
    return this.#recent.all(limit).map(auditEntry);
  }

  async query(filter: AuditFilter = {}, limit = 200): Promise<AuditEntry[]> {
    this.flushSync();
    const server = filter.server ?? '';
    const tool = filter.tool ?? '';
    const outcome = filter.outcome ?? '';
    const client = filter.client ?? '';
    return this.#query
      .all(server, server, tool, tool, outcome, outcome, client, client, limit)
      .map(auditEntry);
  }
}
