import type { Db } from './database.js';

/** Rows fetched per statement: SQLite allows 32,766 parameters, far more than a catalog's tools. */
export const EMBEDDING_CHUNK = 500;

/**
 * Embedding vectors of tool definitions (tool search's semantic ranking), by model and the digest of the text
 * embedded. A catalog that did not change is never embedded twice, across sessions and `tack serve` restarts.
 */
export interface ToolEmbeddings {
  get(model: string, digests: readonly string[]): Promise<Map<string, Float32Array>>;
  put(model: string, entries: ReadonlyArray<{ digest: string; vector: Float32Array }>): Promise<void>;
  /** How many vectors are kept for a model (for tests and `tack tools search --explain`). */
  count(model: string): Promise<number>;
}

/** A stored vector (float32, little-endian) as a Float32Array, copied out of the driver's buffer. */
export function vectorOf(bytes: Uint8Array): Float32Array {
  // The driver's buffer may be shared and is not 4-byte aligned.
  const copy = new Uint8Array(bytes);
  return new Float32Array(copy.buffer, copy.byteOffset, copy.byteLength / 4);
}

export function vectorBytes(vector: Float32Array): Buffer {
  return Buffer.from(vector.buffer, vector.byteOffset, vector.byteLength);
}

export class SqliteToolEmbeddings implements ToolEmbeddings {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async get(model: string, digests: readonly string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (let i = 0; i < digests.length; i += EMBEDDING_CHUNK) {
      const chunk = digests.slice(i, i + EMBEDDING_CHUNK);
      const rows = this.#db
        .prepare(
          `SELECT digest, vector FROM tool_embeddings WHERE model = ? AND digest IN (${chunk.map(() => '?').join(',')})`,
        )
        .all(model, ...chunk) as Array<{ digest: string; vector: Buffer }>;
      for (const row of rows) out.set(row.digest, vectorOf(row.vector));
    }
    return out;
  }

  async put(model: string, entries: ReadonlyArray<{ digest: string; vector: Float32Array }>): Promise<void> {
    const insert = this.#db.prepare(
      'INSERT INTO tool_embeddings (model, digest, vector, at) VALUES (?, ?, ?, ?) ON CONFLICT DO UPDATE SET vector = excluded.vector, at = excluded.at',
    );
    const at = new Date().toISOString();
    this.#db.transaction(() => {
      for (const { digest, vector } of entries) insert.run(model, digest, vectorBytes(vector), at);
    })();
  }

  async count(model: string): Promise<number> {
    return (
      this.#db.prepare('SELECT COUNT(*) AS n FROM tool_embeddings WHERE model = ?').get(model) as {
        n: number;
      }
    ).n;
  }
}
