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

interface PinKey {
  identity: string;
  kind: string;
  name: string;
}

/**
 * One write to the pins. `approve`: the definition becomes the pin and any change waiting is cleared (the user
 * accepted it, or it went back to its pinned form). `first`: trust on first use, which only pins when nothing is
 * approved yet, so of two processes (two `tack serve` instances) that see a definition first, exactly one pins it
 * and the other learns what was pinned. `hold`: the definition waits for review; the approved pin stays.
 */
export type PinWrite =
  | (PinKey & { op: 'approve' | 'first'; sha256: string; definition: string })
  | (PinKey & { op: 'hold'; sha256: string; definition: string; reason: string });

/** The `pins` table: what each server identity showed first (or the user last accepted), and what changed since. */
export interface PinRecords {
  /** Every record of one identity (or of all), ordered for display. */
  list(identity?: string): Promise<PinRecord[]>;
  get(identity: string, kind: string, name: string): Promise<PinRecord | undefined>;
  /**
   * Applies the writes in order, in one transaction (a first review writes thousands of pins). For each `first`
   * that found a definition already approved, the record that stands (its index in `writes`); nothing for the rest.
   */
  write(writes: readonly PinWrite[]): Promise<Map<number, PinRecord>>;
  /** Records that these identities were seen in `project` (a project root), once per pair. */
  noteProject(project: string, identities: readonly string[]): Promise<void>;
  /** The projects each identity was seen in, sorted; an identity pinned before projects were noted has none. */
  projects(): Promise<Map<string, string[]>>;
}

/** Seen-in rows grouped by identity (rows come sorted by project). */
export function projectsByIdentity(
  rows: ReadonlyArray<{ identity: string; project: string }>,
): Map<string, string[]> {
  const byIdentity = new Map<string, string[]>();
  for (const { identity, project } of rows) {
    const list = byIdentity.get(identity);
    if (list) list.push(project);
    else byIdentity.set(identity, [project]);
  }
  return byIdentity;
}

export interface PinColumns {
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

export function pinRecordOf(row: PinColumns): PinRecord {
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

/**
 * The statements, in SQL both engines run (PostgreSQL's `$n` placeholders; the SQLite store rewrites them to `?`,
 * see positional()). `first` only takes a row whose pin is empty, and says by RETURNING whether it did.
 */
export const PIN_SQL = {
  approve: `INSERT INTO pins (identity, kind, name, sha256, definition, pinned_at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (identity, kind, name) DO UPDATE SET sha256 = excluded.sha256, definition = excluded.definition,
      pinned_at = excluded.pinned_at, pending_sha256 = NULL, pending_definition = NULL, pending_reason = NULL,
      pending_since = NULL`,
  first: `INSERT INTO pins (identity, kind, name, sha256, definition, pinned_at) VALUES ($1, $2, $3, $4, $5, $6)
    ON CONFLICT (identity, kind, name) DO UPDATE SET sha256 = excluded.sha256, definition = excluded.definition,
      pinned_at = excluded.pinned_at, pending_sha256 = NULL, pending_definition = NULL, pending_reason = NULL,
      pending_since = NULL
    WHERE pins.sha256 = ''
    RETURNING sha256`,
  hold: `INSERT INTO pins (identity, kind, name, sha256, definition, pinned_at, pending_sha256, pending_definition,
      pending_reason, pending_since) VALUES ($1, $2, $3, '', '', $4, $5, $6, $7, $4)
    ON CONFLICT (identity, kind, name) DO UPDATE SET pending_sha256 = excluded.pending_sha256,
      pending_definition = excluded.pending_definition, pending_reason = excluded.pending_reason,
      pending_since = CASE WHEN pins.pending_sha256 = excluded.pending_sha256 THEN pins.pending_since
                           ELSE excluded.pending_since END`,
  get: 'SELECT * FROM pins WHERE identity = $1 AND kind = $2 AND name = $3',
  noteProject: `INSERT INTO pin_projects (identity, project, seen_at) VALUES ($1, $2, $3)
    ON CONFLICT (identity, project) DO NOTHING`,
} as const;

/** The parameters of one write for PIN_SQL, stamped `now`. */
export function pinParams(write: PinWrite, now: string): unknown[] {
  return write.op === 'hold'
    ? [write.identity, write.kind, write.name, now, write.sha256, write.definition, write.reason]
    : [write.identity, write.kind, write.name, write.sha256, write.definition, now];
}

/**
 * `$n` placeholders as SQLite's anonymous `?`, with the order in which they take `$n`'s values (better-sqlite3
 * binds values by position only, and `$4` may appear twice).
 */
function positional(sql: string): { sql: string; order: number[] } {
  const order: number[] = [];
  const text = sql.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { sql: text, order };
}

export class SqlitePinRecords implements PinRecords {
  readonly #db: Db;
  /** Prepared once: a review looks pins up on every catalog change. */
  readonly #statements = new Map<string, { statement: Database.Statement; order: number[] | undefined }>();

  constructor(db: Db) {
    this.#db = db;
  }

  #sql(text: string): {
    run(...params: unknown[]): unknown;
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  } {
    let entry = this.#statements.get(text);
    if (!entry) {
      const { sql, order } = positional(text);
      entry = { statement: this.#db.prepare(sql), order: order.length ? order : undefined };
      this.#statements.set(text, entry);
    }
    const { statement, order } = entry;
    const bind = (params: unknown[]) => (order ? order.map((i) => params[i]) : params);
    return {
      run: (...params) => statement.run(...bind(params)),
      get: (...params) => statement.get(...bind(params)),
      all: (...params) => statement.all(...bind(params)),
    };
  }

  async list(identity?: string): Promise<PinRecord[]> {
    const rows = (
      identity === undefined
        ? this.#sql('SELECT * FROM pins ORDER BY identity, kind, name').all()
        : this.#sql('SELECT * FROM pins WHERE identity = ? ORDER BY kind, name').all(identity)
    ) as PinColumns[];
    return rows.map(pinRecordOf);
  }

  async noteProject(project: string, identities: readonly string[]): Promise<void> {
    const now = new Date().toISOString();
    this.#db.transaction(() => {
      for (const identity of identities) this.#sql(PIN_SQL.noteProject).run(identity, project, now);
    })();
  }

  async projects(): Promise<Map<string, string[]>> {
    const rows = this.#sql(
      'SELECT identity, project FROM pin_projects ORDER BY identity, project',
    ).all() as Array<{
      identity: string;
      project: string;
    }>;
    return projectsByIdentity(rows);
  }

  async get(identity: string, kind: string, name: string): Promise<PinRecord | undefined> {
    const row = this.#sql(PIN_SQL.get).get(identity, kind, name) as PinColumns | undefined;
    return row ? pinRecordOf(row) : undefined;
  }

  async write(writes: readonly PinWrite[]): Promise<Map<number, PinRecord>> {
    const now = new Date().toISOString();
    const standing = new Map<number, PinRecord>();
    this.#db.transaction(() => {
      for (const [i, write] of writes.entries()) {
        const params = pinParams(write, now);
        if (write.op !== 'first') {
          this.#sql(PIN_SQL[write.op]).run(...params);
          continue;
        }
        if (this.#sql(PIN_SQL.first).get(...params) !== undefined) continue;
        const row = this.#sql(PIN_SQL.get).get(write.identity, write.kind, write.name) as PinColumns;
        standing.set(i, pinRecordOf(row));
      }
    })();
    return standing;
  }
}
