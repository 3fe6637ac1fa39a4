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
export class AuditLog {
  readonly #insert;
  readonly #recent;
  readonly #query;
  #secrets: SecretMasker = SHAPE_MASKER;

  constructor(db: Db) {
    this.#insert = db.prepare<[string, string, string, string, string, number, string, string | null]>(
      'INSERT INTO audit (at, client, server, tool, args_sha256, duration_ms, outcome, detail) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
    );
    this.#recent = db.prepare<
      [number],
      {
        at: string;
        client: string;
        server: string;
        tool: string;
        args_sha256: string;
        duration_ms: number;
        outcome: AuditOutcome;
        detail: string | null;
      }
    >('SELECT * FROM audit ORDER BY id DESC LIMIT ?');
    // A filter left empty matches everything; `instr` rather than LIKE, so `%` and `_` in a name are literal.
    this.#query = db.prepare<
      [string, string, string, string, string, string, string, string, number],
      {
        at: string;
        client: string;
        server: string;
        tool: string;
        args_sha256: string;
        duration_ms: number;
        outcome: AuditOutcome;
        detail: string | null;
      }
    >(
      `SELECT * FROM audit WHERE (? = '' OR server = ?) AND (? = '' OR instr(tool, ?) > 0)
         AND (? = '' OR outcome = ?) AND (? = '' OR instr(client, ?) > 0) ORDER BY id DESC LIMIT ?`,
    );
  }

  /** Known secret values (the servers' env and header values) to mask in `detail`, besides key shapes. */
  addSecrets(values: Iterable<string>): void {
    this.#secrets = this.#secrets.with(values);
  }

  record(entry: AuditEntry): void {
    this.#insert.run(
      entry.at,
      entry.client,
      entry.server,
      entry.tool,
      entry.argsSha256,
      Math.round(entry.durationMs),
      entry.outcome,
      entry.detail === undefined ? null : this.#secrets.maskText(entry.detail),
    );
  }

  /** The newest entries first. */
  recent(limit = 50): AuditEntry[] {
    return this.#recent.all(limit).map(fromRow);
  }

  /** The newest entries matching every filter given: a server, part of a tool or client name, an outcome. */
  query(filter: AuditFilter = {}, limit = 200): AuditEntry[] {
    const server = filter.server ?? '';
    const tool = filter.tool ?? '';
    const outcome = filter.outcome ?? '';
    const client = filter.client ?? '';
    return this.#query.all(server, server, tool, tool, outcome, outcome, client, client, limit).map(fromRow);
  }
}

export interface AuditFilter {
  server?: string | undefined;
  tool?: string | undefined;
  outcome?: AuditOutcome | undefined;
  client?: string | undefined;
}

function fromRow(row: {
  at: string;
  client: string;
  server: string;
  tool: string;
  args_sha256: string;
  duration_ms: number;
  outcome: AuditOutcome;
  detail: string | null;
}): AuditEntry {
  return {
    at: row.at,
    client: row.client,
    server: row.server,
    tool: row.tool,
    argsSha256: row.args_sha256,
    durationMs: row.duration_ms,
    outcome: row.outcome,
    detail: row.detail ?? undefined,
  };
}
