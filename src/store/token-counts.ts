import type { Db } from './database.js';

/** Rows fetched per statement, well under SQLite's parameter limit. */
export const TOKEN_COUNT_CHUNK = 500;

/**
 * Token counts remembered by tokenizer and the digest of the text counted. Loading the tokenizer is most of the
 * time of a command that prints counts (about 1.3 s a process); a catalog counted once is never counted again.
 */
export interface TokenCounts {
  get(tokenizer: string, digests: readonly string[]): Promise<Map<string, number>>;
  put(tokenizer: string, counts: ReadonlyMap<string, number>): Promise<void>;
}

export class SqliteTokenCounts implements TokenCounts {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async get(tokenizer: string, digests: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < digests.length; i += TOKEN_COUNT_CHUNK) {
      const chunk = digests.slice(i, i + TOKEN_COUNT_CHUNK);
      const rows = this.#db
        .prepare(
          `SELECT digest, tokens FROM token_counts WHERE tokenizer = ? AND digest IN (${chunk.map(() => '?').join(',')})`,
        )
        .all(tokenizer, ...chunk) as Array<{ digest: string; tokens: number }>;
      for (const row of rows) out.set(row.digest, row.tokens);
    }
    return out;
  }

  async put(tokenizer: string, counts: ReadonlyMap<string, number>): Promise<void> {
    if (counts.size === 0) return;
    const insert = this.#db.prepare(
      'INSERT INTO token_counts (tokenizer, digest, tokens) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET tokens = excluded.tokens',
    );
    this.#db.transaction(() => {
      for (const [digest, tokens] of counts) insert.run(tokenizer, digest, tokens);
    })();
  }
}
