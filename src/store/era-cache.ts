import type { PriorDiscovery } from '@modelcontextprotocol/client';
import type { Db } from './database.js';

/** A cached era verdict plus the HTTP transport that worked, so a warm start skips both probes. */
export interface EraVerdict {
  prior: PriorDiscovery;
  /** For `http` entries: whether Streamable HTTP answered or the legacy SSE fallback was needed. */
  httpTransport?: 'streamable-http' | 'sse';
}

export interface StoredEraVerdict extends EraVerdict {
  storedAt: number;
}

/**
 * How long a verdict is supplied before tack probes again. A stale modern verdict fails loudly at the first
 * request (tack then re-probes), but a stale legacy verdict succeeds silently against an upgraded server, so
 * legacy verdicts are retired sooner.
 */
export const ERA_VERDICT_TTL_MS = { modern: 7 * 24 * 3600_000, legacy: 24 * 3600_000 } as const;

/** Era verdicts keyed by a server's command line (stdio) or endpoint URL (HTTP), dated with tack's clock. */
export interface EraCache {
  /** The verdict for `key` if one is stored and still inside its freshness horizon. */
  get(key: string, now?: number): Promise<StoredEraVerdict | undefined>;
  put(key: string, verdict: EraVerdict, now?: number): Promise<void>;
  delete(key: string): Promise<void>;
}

/**
 * A stored verdict as the cache answers it: `undefined` past its horizon, `'damaged'` when the text is not a
 * verdict (the caller deletes the row). Both engines store the verdict as JSON text.
 */
export function readEraVerdict(
  text: string,
  storedAt: number,
  now: number,
): StoredEraVerdict | 'damaged' | undefined {
  let verdict: EraVerdict;
  try {
    verdict = JSON.parse(text) as EraVerdict;
  } catch {
    return 'damaged';
  }
  const ttl = ERA_VERDICT_TTL_MS[verdict?.prior?.kind];
  if (ttl === undefined) return 'damaged';
  if (now - storedAt > ttl) return undefined;
  return { ...verdict, storedAt };
}

/** The era cache in the SQLite store. */
export class SqliteEraCache implements EraCache {
  readonly #get;
  readonly #put;
  readonly #delete;

  constructor(db: Db) {
    this.#get = db.prepare<[string], { verdict: string; stored_at: number }>(
      'SELECT verdict, stored_at FROM era_verdicts WHERE key = ?',
    );
    this.#put = db.prepare<[string, string, number]>(
      'INSERT INTO era_verdicts (key, verdict, stored_at) VALUES (?, ?, ?) ' +
        'ON CONFLICT(key) DO UPDATE SET verdict = excluded.verdict, stored_at = excluded.stored_at',
    );
    this.#delete = db.prepare<[string]>('DELETE FROM era_verdicts WHERE key = ?');
  }

  async get(key: string, now = Date.now()): Promise<StoredEraVerdict | undefined> {
    const row = this.#get.get(key);
    if (!row) return undefined;
    const verdict = readEraVerdict(row.verdict, row.stored_at, now);
    if (verdict !== 'damaged') return verdict;
    this.#delete.run(key);
    return undefined;
  }

  async put(key: string, verdict: EraVerdict, now = Date.now()): Promise<void> {
    this.#put.run(key, JSON.stringify(verdict), now);
  }

  async delete(key: string): Promise<void> {
    this.#delete.run(key);
  }
}
