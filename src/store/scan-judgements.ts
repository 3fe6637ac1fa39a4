import type { Db } from './database.js';

/** A verdict of the scan's LLM judge (security/judge.ts), as kept. */
export interface StoredJudgement {
  verdict: 'poisoned' | 'benign';
  reason: string;
}

/**
 * The scan judge's verdicts by model and definition digest (security/judge.ts judgeDigest): a definition is judged
 * once per model, across `tack scan --judge` runs and sessions.
 */
export interface ScanJudgements {
  get(model: string, digest: string): Promise<StoredJudgement | undefined>;
  put(model: string, digest: string, judgement: StoredJudgement): Promise<void>;
  /** How many verdicts are kept for a model (for tests). */
  count(model: string): Promise<number>;
}

/** A stored row as a judgement; anything else (a row written by a newer tack) is no judgement. */
export function storedJudgement(
  row: { verdict: string; reason: string } | undefined,
): StoredJudgement | undefined {
  if (!row || (row.verdict !== 'poisoned' && row.verdict !== 'benign')) return undefined;
  return { verdict: row.verdict, reason: row.reason };
}

export class SqliteScanJudgements implements ScanJudgements {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async get(model: string, digest: string): Promise<StoredJudgement | undefined> {
    return storedJudgement(
      this.#db
        .prepare('SELECT verdict, reason FROM scan_judgements WHERE model = ? AND digest = ?')
        .get(model, digest) as { verdict: string; reason: string } | undefined,
    );
  }

  async put(model: string, digest: string, judgement: StoredJudgement): Promise<void> {
    this.#db
      .prepare(
        'INSERT INTO scan_judgements (model, digest, verdict, reason, at) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO UPDATE SET verdict = excluded.verdict, reason = excluded.reason, at = excluded.at',
      )
      .run(model, digest, judgement.verdict, judgement.reason, new Date().toISOString());
  }

  async count(model: string): Promise<number> {
    return (
      this.#db.prepare('SELECT COUNT(*) AS n FROM scan_judgements WHERE model = ?').get(model) as {
        n: number;
      }
    ).n;
  }
}
