import { TackError } from '../errors.js';
import { printable } from '../util/printable.js';
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

export interface SessionColumns {
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

export function sessionRowOf(row: SessionColumns): SessionRow {
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
    steps: Number(row.steps),
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    costUsd: Number(row.cost_usd),
  };
}

/** The row's columns in `INSERT` order, counts whole. */
export function sessionValues(row: SessionRow): unknown[] {
  return [
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
  ];
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
export interface SessionIndex {
  /** Inserts the row or replaces every column of the existing one. */
  upsert(row: SessionRow): Promise<void>;
  get(id: string): Promise<SessionRow | undefined>;
  /** The newest sessions first, optionally only those started in `cwd`. */
  list(options?: { limit?: number; cwd?: string }): Promise<SessionRow[]>;
  /**
   * The session a user means by `prefix`: the one with exactly that id, else the only one whose id, or the random
   * tail of it, starts with `prefix`. `undefined` when none does; a TackError listing the candidates when several
   * do.
   */
  findByPrefix(prefix: string): Promise<SessionRow | undefined>;
}

/**
 * findByPrefix for either engine: `candidates` gets two LIKE patterns (`prefix%`, `%-prefix%`, escaped with `\`),
 * a superset that sessionIdMatches() narrows.
 */
export async function findSessionByPrefix(
  prefix: string,
  get: (id: string) => Promise<SessionRow | undefined>,
  candidates: (start: string, tail: string) => Promise<SessionRow[]>,
): Promise<SessionRow | undefined> {
  const wanted = prefix.trim();
  if (wanted === '') throw new TackError('USAGE', 'the session id is empty', { hint: 'Give a session id.' });
  const exact = await get(wanted);
  if (exact) return exact;
  const like = wanted.replace(/[\\%_]/g, (c) => `\\${c}`);
  const matches = (await candidates(`${like}%`, `%-${like}%`)).filter((row) =>
    sessionIdMatches(row.id, wanted),
  );
  if (matches.length > 1) throw ambiguousSessionError(wanted, matches.map(describeSession));
  return matches[0];
}

export class SqliteSessionIndex implements SessionIndex {
  readonly #upsert;
  readonly #get;
  readonly #list;
  readonly #listCwd;
  readonly #candidates;

  constructor(db: Db) {
    this.#upsert = db.prepare<unknown[]>(
      `INSERT INTO sessions (id, parent_id, started_at, updated_at, cwd, model, title, status, file, guidelines_hash,
         steps, input_tokens, output_tokens, cost_usd)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(id) DO UPDATE SET parent_id = excluded.parent_id, started_at = excluded.started_at,
         updated_at = excluded.updated_at, cwd = excluded.cwd, model = excluded.model, title = excluded.title,
         status = excluded.status, file = excluded.file, guidelines_hash = excluded.guidelines_hash,
         steps = excluded.steps, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
         cost_usd = excluded.cost_usd`,
    );
    this.#get = db.prepare<[string], SessionColumns>('SELECT * FROM sessions WHERE id = ?');
    this.#list = db.prepare<[number], SessionColumns>(
      'SELECT * FROM sessions ORDER BY started_at DESC, id DESC LIMIT ?',
    );
    this.#listCwd = db.prepare<[string, number], SessionColumns>(
      'SELECT * FROM sessions WHERE cwd = ? ORDER BY started_at DESC, id DESC LIMIT ?',
    );
    // A superset (the second pattern also hits the middle of an id); sessionIdMatches() decides.
    this.#candidates = db.prepare<[string, string], SessionColumns>(
      "SELECT * FROM sessions WHERE id LIKE ? ESCAPE '\\' OR id LIKE ? ESCAPE '\\' ORDER BY started_at DESC, id DESC",
    );
  }

  async upsert(row: SessionRow): Promise<void> {
    this.#upsert.run(...sessionValues(row));
  }

  async get(id: string): Promise<SessionRow | undefined> {
    const row = this.#get.get(id);
    return row ? sessionRowOf(row) : undefined;
  }

  async list(options: { limit?: number; cwd?: string } = {}): Promise<SessionRow[]> {
    const limit = options.limit ?? 50;
    const rows = options.cwd === undefined ? this.#list.all(limit) : this.#listCwd.all(options.cwd, limit);
    return rows.map(sessionRowOf);
  }

  findByPrefix(prefix: string): Promise<SessionRow | undefined> {
    return findSessionByPrefix(
      prefix,
      (id) => this.get(id),
      async (start, tail) => this.#candidates.all(start, tail).map(sessionRowOf),
    );
  }
}

/**
 * What `/resume` offers in both chats: the folder's newest top-level sessions other than the one running (a
 * sub-agent's session is continued through its parent). One more row is asked for, as the running one may be among
 * them.
 */
export async function earlierSessions(
  index: SessionIndex,
  options: { cwd: string; current: string; limit: number },
): Promise<SessionRow[]> {
  return (await index.list({ cwd: options.cwd, limit: options.limit + 1 }))
    .filter((row) => !row.parentId && row.id !== options.current)
    .slice(0, options.limit);
}

/**
 * One session on one line, as `/resume` lists them in the full screen and the line mode: short id, when, status,
 * steps, cost, first message (made printable: the index may be a shared database, titles are user text).
 */
export function sessionSummary(row: SessionRow): string {
  const when = row.updatedAt.slice(0, 16).replace('T', ' ');
  return `${row.id.slice(row.id.lastIndexOf('-') + 1)}  ${when}  ${row.status.padEnd(9)} ${row.steps} steps  $${row.costUsd.toFixed(4)}  ${printable(row.title ?? '(no message)')}`;
}
