import type { Db } from './database.js';

/** Entries kept per project: older ones are dropped as new ones come. */
export const MAX_HISTORY_ENTRIES = 1000;
/** The longest entry kept; a longer message is stored cut (recall is for retyping, not an archive). */
export const MAX_HISTORY_ENTRY_CHARS = 10_000;

/**
 * What the user typed at `tack chat`'s prompt, per project folder, newest last: the up arrow recalls it, across
 * sessions. A message the same as the one before it is kept once.
 */
export interface InputHistory {
  /** The newest `limit` entries of a project, oldest first. */
  list(project: string, limit?: number): Promise<string[]>;
  add(project: string, text: string, at?: Date): Promise<void>;
}

/** The entry as kept (cut to its limit), or undefined when there is nothing to keep. */
export function historyEntry(text: string): string | undefined {
  const entry = text.slice(0, MAX_HISTORY_ENTRY_CHARS);
  return entry.trim() === '' ? undefined : entry;
}

export function historyLimit(limit: number): number {
  return Math.max(0, Math.min(limit, MAX_HISTORY_ENTRIES));
}

export class SqliteInputHistory implements InputHistory {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async list(project: string, limit = MAX_HISTORY_ENTRIES): Promise<string[]> {
    const rows = this.#db
      .prepare('SELECT text FROM input_history WHERE project = ? ORDER BY id DESC LIMIT ?')
      .all(project, historyLimit(limit)) as Array<{ text: string }>;
    return rows.map((r) => r.text).reverse();
  }

  async add(project: string, text: string, at = new Date()): Promise<void> {
    const entry = historyEntry(text);
    if (entry === undefined) return;
    const last = this.#db
      .prepare('SELECT text FROM input_history WHERE project = ? ORDER BY id DESC LIMIT 1')
      .get(project) as { text: string } | undefined;
    if (last?.text === entry) return;
    this.#db.transaction(() => {
      this.#db
        .prepare('INSERT INTO input_history (project, text, at) VALUES (?, ?, ?)')
        .run(project, entry, at.toISOString());
      this.#db
        .prepare(
          `DELETE FROM input_history WHERE project = ? AND id <= (
             SELECT id FROM input_history WHERE project = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
        )
        .run(project, project, MAX_HISTORY_ENTRIES);
    })();
  }
}
