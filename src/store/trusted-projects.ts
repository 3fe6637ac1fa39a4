import type { Db } from './database.js';

/** One trusted project: its root and the SHA-256 of each trust-relevant file at the moment it was trusted. */
export interface TrustedProject {
  /** Absolute path of the project root. */
  root: string;
  /** Path relative to the root (`/`-separated) -> SHA-256 hex. */
  files: Record<string, string>;
  /** ISO time. */
  trustedAt: string;
}

/**
 * Projects the user trusted with `tack trust`. A row is a statement about file contents, not about a directory:
 * the security layer compares the hashes with the files on disk and asks again when they differ.
 */
export interface TrustedProjects {
  get(root: string): Promise<TrustedProject | undefined>;
  /** Records (or replaces) the trust of `root` with these file hashes. */
  set(root: string, files: Readonly<Record<string, string>>, trustedAt?: string): Promise<TrustedProject>;
  /** Forgets `root`; whether it was trusted. */
  delete(root: string): Promise<boolean>;
  /** Every trusted project, by root. */
  list(): Promise<TrustedProject[]>;
}

export interface TrustedProjectRow {
  root: string;
  files: string;
  trusted_at: string;
}

export function trustedProjectOf(row: TrustedProjectRow): TrustedProject {
  return { root: row.root, files: parseFiles(row.files), trustedAt: row.trusted_at };
}

/** A damaged row reads as "no files": every current file then counts as changed, so the project is asked again. */
function parseFiles(text: string): Record<string, string> {
  try {
    const value: unknown = JSON.parse(text);
    if (typeof value !== 'object' || value === null || Array.isArray(value)) return {};
    return Object.fromEntries(
      Object.entries(value).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  } catch {
    return {};
  }
}

export class SqliteTrustedProjects implements TrustedProjects {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async get(root: string): Promise<TrustedProject | undefined> {
    const row = this.#db
      .prepare<[string], TrustedProjectRow>(
        'SELECT root, files, trusted_at FROM trusted_projects WHERE root = ?',
      )
      .get(root);
    return row ? trustedProjectOf(row) : undefined;
  }

  async set(
    root: string,
    files: Readonly<Record<string, string>>,
    trustedAt = new Date().toISOString(),
  ): Promise<TrustedProject> {
    this.#db
      .prepare(
        'INSERT INTO trusted_projects (root, files, trusted_at) VALUES (?, ?, ?) ' +
          'ON CONFLICT(root) DO UPDATE SET files = excluded.files, trusted_at = excluded.trusted_at',
      )
      .run(root, JSON.stringify(files), trustedAt);
    return { root, files: { ...files }, trustedAt };
  }

  async delete(root: string): Promise<boolean> {
    return this.#db.prepare('DELETE FROM trusted_projects WHERE root = ?').run(root).changes > 0;
  }

  async list(): Promise<TrustedProject[]> {
    return this.#db
      .prepare<[], TrustedProjectRow>('SELECT root, files, trusted_at FROM trusted_projects ORDER BY root')
      .all()
      .map(trustedProjectOf);
  }
}
