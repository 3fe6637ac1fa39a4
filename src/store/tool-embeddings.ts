import type { Db } from './database.js';

/** Rows fetched per statement: SQLite allows 32,766 parameters, far more than a catalog's tools. */
const CHUNK = 500;

/**
 * Embedding vectors of tool definitions (tool search's semantic ranking), by model and the digest of the text
 * embedded. A catalog that did not change is never embedded twice, across sessions and `tack serve` restarts.
 */
export class ToolEmbeddings {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  get(model: string, digests: readonly string[]): Map<string, Float32Array> {
    const out = new Map<string, Float32Array>();
    for (let i = 0; i < digests.length; i += CHUNK) {
      const chunk = digests.slice(i, i + CHUNK);
      const rows = this.#db
        .prepare(
          `SELECT digest, vector FROM tool_embeddings WHERE model = ? AND digest IN (${chunk.map(() => '?').join(',')})`,
        )
        .all(model, ...chunk) as Array<{ digest: string; vector: Buffer }>;
      for (const row of rows) {
        // Copied out of the driver's buffer, which may be shared and is not 4-byte aligned.
        const bytes = new Uint8Array(row.vector);
        out.set(row.digest, new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
      }
    }
    return out;
  }

  put(model: string, entries: ReadonlyArray<{ digest: string; vector: Float32Array }>): void {
    const insert = this.#db.prepare(
      'INSERT INTO tool_embeddings (model, digest, vector, at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET vector = excluded.vector, at = excluded.at',
    );
    const at = new Date().toISOString();
    this.#db.transaction(() => {
      for (const { digest, vector } of entries)
        insert.run(model, digest, Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength), at);
    })();
  }

  /** How many vectors are kept for a model (for tests and `tack tools search --explain`). */
  count(model: string): number {
    return (
      this.#db.prepare('SELECT COUNT(*) AS n FROM tool_embeddings WHERE model = ?').get(model) as {
        n: number;
      }
    ).n;
  }
}
