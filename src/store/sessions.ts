import { TackError } from '../errors.js';
import type { Db } from './database.js';

/**
 * One session in the index. The index is derived from the session's JSONL transcript (the truth), kept so that
 * listing and finding sessions need not read every file; it can always be rebuilt from the transcript.
 */
export interface SessionRow {
  id: string;
  /** The parent session of a sub-agent's session. */
  parentId?: string | undefined;
  /** ISO times. */
  startedAt: string;
  updatedAt: string;
  cwd: string;
  model: string;
  /** The first user message, cut to 80 characters. */
  title?: string | undefined;
  /**
   * `running`, or the run's end reason (`completed`, `max-steps`, ..., `error`). A `running` row whose process
   * is gone is a crashed session: the index cannot tell, the transcript (no `session-end`) can.
   */
  status: string;
  /** The transcript's path. */
  file: string;
  guidelinesHash?: string | undefined;
  steps: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

interface Row {
  id: string;
  parent_id: string | null;
  started_at: string;
  updated_at: string;
  cwd: string;
  model: string;
  title: string | null;
  status: string;
  file: string;
  guidelines_hash: string | null;
  steps: number;
  input_tokens: number;
  output_tokens: number;
  cost_usd: number;
}

function fromRow(row: Row): SessionRow {
  return {
    id: row.id,
    parentId: row.parent_id ?? undefined,
    startedAt: row.started_at,
    updatedAt: row.updated_at,
    cwd: row.cwd,
    model: row.model,
    title: row.title ?? undefined,
    status: row.status,
    file: row.file,
    guidelinesHash: row.guidelines_hash ?? undefined,
    steps: row.steps,
    inputTokens: row.input_tokens,
    outputTokens: row.output_tokens,
    costUsd: row.cost_usd,
  };
}

/**
 * Whether `id` is what a user means by `prefix`. Session ids start with their time (`20261130-0215-1a2b3c4d`), so
 * the first eight characters are the day, shared by every session of that day: the random tail is what users copy
 * and type, and a prefix of it matches as well as a prefix of the whole id.
 */
export function sessionIdMatches(id: string, prefix: string): boolean {
  if (id.startsWith(prefix)) return true;
  const tail = id.slice(id.lastIndexOf('-') + 1);
  return tail !== id && tail.startsWith(prefix);
}

/** The line that identifies a session among candidates: id, start time, status and title. */
export function describeSession(row: SessionRow): string {
  return `${row.id}  ${row.startedAt}  ${row.status}${row.title ? `  ${row.title}` : ''}`;
}

/** The error for a prefix that matches several sessions; also used when the transcripts are scanned instead. */
export function ambiguousSessionError(prefix: string, candidates: readonly string[]): TackError {
  return new TackError('USAGE', `session '${prefix}' is ambiguous: ${candidates.length} sessions match`, {
    details: candidates,
    hint: 'Type more characters of the session id.',
  });
}

/** The session index in the store (table `sessions`). */
export class SessionIndex {
  readonly #upsert;
  readonly #get;
  readonly #list;
  readonly #listCwd;
  readonly #candidates;

  constructor(db: Db) {
    this.#upsert = db.prepare<
      [
        string,
        string | null,
        string,
        string,
        string,
        string,
        string | null,
        string,
        string,
        string | null,
        number,
        number,
        number,
        number,
      ]
    >(
      `INSERT INTO sessions (id, parent_id, started_at, updated_at, cwd, model, title, status, file, guidelines_hash,
         steps, input_tokens, output_tokens, cost_usd)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET parent_id = excluded.parent_id, started_at = excluded.started_at,
         updated_at = excluded.updated_at, cwd = excluded.cwd, model = excluded.model, title = excluded.title,
         status = excluded.status, file = excluded.file, guidelines_hash = excluded.guidelines_hash,
         steps = excluded.steps, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
         cost_usd = excluded.cost_usd`,
    );
    this.#get = db.prepare<[string], Row>('SELECT * FROM sessions WHERE id = ?');
    this.#list = db.prepare<[number], Row>(
      'SELECT * FROM sessions ORDER BY started_at DESC, id DESC LIMIT ?',
    );
    this.#listCwd = db.prepare<[string, number], Row>(
      'SELECT * FROM sessions WHERE cwd = ? ORDER BY started_at DESC, id DESC LIMIT ?',
    );
    // A superset (the second pattern also hits the middle of an id); sessionIdMatches() decides.
    this.#candidates = db.prepare<[string, string], Row>(
      "SELECT * FROM sessions WHERE id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' ORDER BY started_at DESC, id DESC",
    );
  }

  /** Inserts the row or replaces every column of the existing one. */
  upsert(row: SessionRow): void {
    this.#upsert.run(
      row.id,
      row.parentId ?? null,
      row.startedAt,
      row.updatedAt,
      row.cwd,
      row.model,
      row.title ?? null,
      row.status,
      row.file,
      row.guidelinesHash ?? null,
      Math.round(row.steps),
      Math.round(row.inputTokens),
      Math.round(row.outputTokens),
      row.costUsd,
    );
  }

  get(id: string): SessionRow | undefined {
    const row = this.#get.get(id);
    return row ? fromRow(row) : undefined;
  }

  /** The newest sessions first, optionally only those started in `cwd`. */
  list(options: { limit?: number; cwd?: string } = {}): SessionRow[] {
    const limit = options.limit ?? 50;
    const rows = options.cwd === undefined ? this.#list.all(limit) : this.#listCwd.all(options.cwd, limit);
    return rows.map(fromRow);
  }

  /**
   * The session a user means by `prefix`: the one with exactly that id, else the only one whose id, or the random
   * tail of it, starts with `prefix`. `undefined` when none does; a TackError listing the candidates when several
   * do.
   */
  findByPrefix(prefix: string): SessionRow | undefined {
    const wanted = prefix.trim();
    if (wanted === '')
      throw new TackError('USAGE', 'the session id is empty', { hint: 'Give a session id.' });
    const exact = this.get(wanted);
    if (exact) return exact;
    const like = wanted.replace(/[\\%_]/g, (c) => `\\${c}`);
    const matches = this.#candidates
      .all(`${like}%`, `%-${like}%`)
      .map(fromRow)
      .filter((row) => sessionIdMatches(row.id, wanted));
    if (matches.length > 1) throw ambiguousSessionError(wanted, matches.map(describeSession));
    return matches[0];
  }
}
