import { canonicalJson } from '../../util/canonical-json.js';
import type { ComputationParameter } from '../computation.js';
import type { ParameterValue } from './parameters.js';

/** One run of a sanctioned computation, as handed to an executor. */
export interface ExecuteRequest {
  conceptId: string;
  /** The sanctioned computation text, holes still written `@name`: the executor binds it, never edits it. */
  sql: string;
  parameters: ComputationParameter[];
  /** Checked values (`checkParameters`), one per declared parameter. */
  values: Record<string, ParameterValue>;
}

/**
 * The evidence a run returns (§10.2 `executor.receipt`). JSON values only, so a receipt can be compared, frozen
 * and logged as it is. Executors may add runtime evidence under further keys (a dbt `compiled_sql`, a BigQuery
 * job link); the attester checks that every field the contract declares is there.
 */
export interface Receipt {
  /** The runtime's own identity of the run (`sqlite:<uuid>`, `postgres:<backend pid>:<txid>`). */
  job_id: string;
  runtime: string;
  concept_id: string;
  /** Exactly the text handed to the driver. */
  executed_sql: string;
  /** The bind values, by parameter name, as checked. */
  parameters: Record<string, unknown>;
  /** The first row's cell values in select order; `null` when the computation returned no rows. */
  result: unknown;
  columns?: string[];
  rows?: Record<string, unknown>[];
  started_at: string;
  duration_ms: number;
  [field: string]: unknown;
}

/** Runs a computation's sanctioned statement for one runtime, read-only, and returns its receipt. */
export interface ComputationExecutor {
  /** The `runtime` value of the contracts this executor runs. */
  runtime: string;
  /** Runs the computation and returns its receipt, which it has also recorded in `log`. */
  execute(request: ExecuteRequest): Promise<Receipt>;
  /** Where this executor records its receipts; the attester re-reads them from there by job id. */
  log?: ReceiptLog;
  /** Releases the database connection. */
  close?(): Promise<void>;
}

/**
 * The receipts of the runs an executor really made, by job id: the authoritative copy the attester re-reads
 * (§10.5 step 5: "re-read by job id rather than taken from the agent's text"). A receipt handed back by anyone
 * else is only a claim about one of these. Entries are deep-frozen copies, so nothing holding a reference can
 * edit the record; the oldest entries go once `maxEntries` is reached, so a long session does not grow without
 * bound.
 */
export class ReceiptLog {
  readonly #entries = new Map<string, Readonly<Receipt>>();

  constructor(readonly maxEntries = 10_000) {}

  /** Stores a frozen copy and returns it. A second, different receipt under a recorded job id is refused. */
  record(receipt: Receipt): Readonly<Receipt> {
    if (typeof receipt.job_id !== 'string' || receipt.job_id === '')
      throw new Error('a receipt must carry a job_id to be recorded');
    const copy = deepFreeze(structuredClone(receipt));
    const existing = this.#entries.get(receipt.job_id);
    if (existing !== undefined) {
      if (canonicalJson(existing) === canonicalJson(copy)) return existing;
      throw new Error(`job ${receipt.job_id} is already recorded with a different receipt`);
    }
    this.#entries.set(receipt.job_id, copy);
    while (this.#entries.size > this.maxEntries) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#entries.delete(oldest);
    }
    return copy;
  }

  /** The receipt of a job, while the log still holds it. */
  get(jobId: string): Readonly<Receipt> | undefined {
    return this.#entries.get(jobId);
  }

  get size(): number {
    return this.#entries.size;
  }
}

function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
}

/**
 * A driver's cell as a JSON value: big integers as their decimal text (no precision lost), bytes as PostgreSQL's
 * `\x<hex>` text, dates as ISO 8601. Everything else a driver returns already is JSON.
 */
export function jsonCell(value: unknown): unknown {
  if (typeof value === 'bigint') return value.toString();
  if (value instanceof Uint8Array) return `\\x${Buffer.from(value).toString('hex')}`;
  if (value instanceof Date) return value.toISOString();
  if (Array.isArray(value)) return value.map(jsonCell);
  if (typeof value === 'object' && value !== null)
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, jsonCell(v)]));
  return value;
}

/** The receipt fields every SQL executor fills the same way, from the columns and rows the driver returned. */
export function sqlReceipt(run: {
  jobId: string;
  runtime: string;
  conceptId: string;
  executedSql: string;
  values: Record<string, ParameterValue>;
  columns: string[];
  rows: unknown[][];
  startedAt: Date;
  durationMs: number;
}): Receipt {
  const rows = run.rows.map((row) => row.map(jsonCell));
  return {
    job_id: run.jobId,
    runtime: run.runtime,
    concept_id: run.conceptId,
    executed_sql: run.executedSql,
    parameters: { ...run.values },
    result: rows[0] ?? null,
    columns: run.columns,
    // Objects by column name for reading; a duplicated column name keeps its last value here, `result` keeps all.
    rows: rows.map((row) => Object.fromEntries(run.columns.map((c, i) => [c, row[i]]))),
    started_at: run.startedAt.toISOString(),
    duration_ms: Math.round(run.durationMs * 1000) / 1000,
  };
}
