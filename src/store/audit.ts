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

/** The audit log of calls tack served (the gateway), in the store. */
export interface AuditLog {
  /** Known secret values (the servers' env and header values) to mask in `detail`, besides key shapes. */
  addSecrets(values: Iterable<string>): void;
  /**
   * Records one call. Resolves once the row is written: the gateway answers the call after that, so an
   * instance killed outright loses no row of a call it answered.
   */
  record(entry: AuditEntry): Promise<void>;
  /** The newest entries first. */
  recent(limit?: number): Promise<AuditEntry[]>;
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

/** The audit log in the SQLite store: one row per call, written before the call is answered. */
export class SqliteAuditLog implements AuditLog {
  readonly #insert;
  readonly #recent;
  #secrets: SecretMasker = SHAPE_MASKER;

  constructor(db: Db) {
    this.#insert = db.prepare<AuditRow>(
      'INSERT INTO audit (at, client, server, tool, args_sha256, duration_ms, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#recent = db.prepare<[number], AuditColumns>('SELECT * FROM audit ORDER BY id DESC LIMIT ?');
  }

  addSecrets(values: Iterable<string>): void {
    this.#secrets = this.#secrets.with(values);
  }

  async record(entry: AuditEntry): Promise<void> {
    this.#insert.run(...auditRow(entry, this.#secrets));
  }

  async recent(limit = 50): Promise<AuditEntry[]> {
    return this.#recent.all(limit).map(auditEntry);
  }
}
