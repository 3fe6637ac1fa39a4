import type Database from 'better-sqlite3';
import type { Db } from './database.js';

/** One pinned definition: the approved one (`sha256` empty when none was ever approved) and a change waiting. */
export interface PinRecord {
  identity: string;
  kind: string;
  name: string;
  /** Empty: nothing approved yet (a definition held back at first sight, e.g. for a high scan finding). */
  sha256: string;
  /** Canonical JSON of the approved definition (empty with `sha256`). */
  definition: string;
  pinnedAt: string;
  pending?: { sha256: string; definition: string; reason: string; since: string };
}

interface Row {
  identity: string;
  kind: string;
  name: string;
  sha256: string;
  definition: string;
  pinned_at: string;
  pending_sha256: string | null;
  pending_definition: string | null;
  pending_reason: string | null;
  pending_since: string | null;
}

/** The `pins` table: what each server identity showed first (or the user last accepted), and what changed since. */
export class PinRecords {
  readonly #db: Db;
  /** Prepared once: a review looks pins up on every catalog change. */
  readonly #statements = new Map<string, Database.Statement>();

  constructor(db: Db) {
    this.#db = db;
  }

  #sql(sql: string): Database.Statement {
    let statement = this.#statements.get(sql);
    if (!statement) {
      statement = this.#db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement;
  }

  /** Runs `fn` in one transaction: a first review writes thousands of pins, one commit each would dominate. */
  transaction<T>(fn: () => T): T {
    return this.#db.transaction(fn)();
  }

  /** Every record of one identity (or of all), ordered for display. */
  list(identity?: string): PinRecord[] {
    const rows = (
      identity === undefined
        ? this.#sql('SELECT * FROM pins ORDER BY identity, kind, name').all()
        : this.#sql('SELECT * FROM pins WHERE identity = ? ORDER BY kind, name').all(identity)
    ) as Row[];
    return rows.map(toRecord);
  }

  get(identity: string, kind: string, name: string): PinRecord | undefined {
    const row = this.#sql('SELECT * FROM pins WHERE identity = ? AND kind = ? AND name = ?').get(
      identity,
      kind,
      name,
    ) as Row | undefined;
    return row ? toRecord(row) : undefined;
  }

  /** Approves `definition`: it becomes the pin, and any change waiting is cleared. */
  approve(identity: string, kind: string, name: string, sha256: string, definition: string): void {
    this.#sql(
      `INSERT INTO pins (identity, kind, name, sha256, definition, pinned_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET sha256 = excluded.sha256, definition = excluded.definition,
           pinned_at = excluded.pinned_at, pending_sha256 = NULL, pending_definition = NULL,
           pending_reason = NULL, pending_since = NULL`,
    ).run(identity, kind, name, sha256, definition, new Date().toISOString());
  }

  /** Holds `definition` for review; the approved pin (if any) stays what it was. */
  hold(
    identity: string,
    kind: string,
    name: string,
    sha256: string,
    definition: string,
    reason: string,
  ): void {
    const now = new Date().toISOString();
    this.#sql(
      `INSERT INTO pins (identity, kind, name, sha256, definition, pinned_at, pending_sha256, pending_definition,
           pending_reason, pending_since) VALUES (?, ?, ?, '', '', ?, ?, ?, ?, ?)
         ON CONFLICT DO UPDATE SET pending_sha256 = excluded.pending_sha256,
           pending_definition = excluded.pending_definition, pending_reason = excluded.pending_reason,
           pending_since = CASE WHEN pins.pending_sha256 = excluded.pending_sha256 THEN pins.pending_since
                                ELSE excluded.pending_since END`,
    ).run(identity, kind, name, now, sha256, definition, reason, now);
  }
}

function toRecord(row: Row): PinRecord {
  return {
    identity: row.identity,
    kind: row.kind,
    name: row.name,
    sha256: row.sha256,
    definition: row.definition,
    pinnedAt: row.pinned_at,
    ...(row.pending_sha256 !== null
      ? {
          pending: {
            sha256: row.pending_sha256,
            definition: row.pending_definition ?? '',
            reason: row.pending_reason ?? '',
            since: row.pending_since ?? '',
          },
        }
      : {}),
  };
}
