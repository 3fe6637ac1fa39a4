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
export class EraCache {
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

  /** The verdict for `key` if one is stored and still inside its freshness horizon. */
  get(key: string, now = Date.now()): StoredEraVerdict | undefined {
    const row = this.#get.get(key);
    if (!row) return undefined;
    let verdict: EraVerdict;
    try {
      verdict = JSON.parse(row.verdict) as EraVerdict;
    } catch {
      this.delete(key);
      return undefined;
    }
    if (now - row.stored_at > ERA_VERDICT_TTL_MS[verdict.prior.kind]) return undefined;
    return { ...verdict, storedAt: row.stored_at };
  }

  put(key: string, verdict: EraVerdict, now = Date.now()): void {
    this.#put.run(key, JSON.stringify(verdict), now);
  }

  delete(key: string): void {
    this.#delete.run(key);
  }
}
