import { performance } from 'node:perf_hooks';
import type pg from 'pg';
import { errorMessage, requireOptional, TackError } from '../../errors.js';
import {
  type ComputationExecutor,
  type ExecuteRequest,
  type Receipt,
  type ReceiptLog,
  sqlReceipt,
} from './executors.js';
import { bindSingleStatement } from './sql.js';

/** The database (a connection string, a pool configuration or a pool), the receipt log and the bounds. */
export interface PostgresExecutorOptions {
  /** `postgresql://user@host:port/db`; or `client` (pg's connection settings), or an existing `pool`. */
  connectionString?: string;
  client?: pg.PoolConfig;
  /** A pool owned by the caller: `close()` leaves it open. */
  pool?: pg.Pool;
  log: ReceiptLog;
  /** Rows kept in the receipt; a computation's value is its first row. Default 1000. */
  maxRows?: number;
  /** `statement_timeout` for the computation's transaction. Default 60 s. */
  statementTimeoutMs?: number;
}

/**
 * Type OIDs whose value stays the server's text. pg already returns NUMERIC (1700) and int8 (20) as strings,
 * which is kept: a revenue figure must not pass through a double. Dates and times would become JS Date objects
 * read in the local time zone; their text is exact and JSON.
 */
const TEXT_TYPES = new Set([
  1082, // date
  1083, // time
  1114, // timestamp
  1184, // timestamptz
  1186, // interval
  1266, // timetz
]);

/** The driver, an optional package: loaded by the first computation that needs it, never at import. */
const driver = (): typeof pg => requireOptional<typeof pg>('A runtime: postgres computation', 'pg');

const types = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    TEXT_TYPES.has(oid)
      ? (value: string) => value
      : driver().types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

/**
 * Runs `runtime: postgres` computations with `pg`: each in its own `BEGIN READ ONLY` transaction (the server
 * refuses any write, whatever the text says), always rolled back, with `@name` holes turned into `$n` and the
 * values sent separately over the extended protocol (which also refuses a second statement). The job id is the
 * server's own identity of the run: `postgres:<backend pid>:<transaction id>`.
 *
 * Cell values are what pg gives, except dates and times kept as text: NUMERIC and bigint arrive as decimal
 * strings, int2/int4/float as numbers, booleans as booleans, json as parsed JSON.
 */
export function postgresExecutor(
  options: PostgresExecutorOptions,
): ComputationExecutor & { log: ReceiptLog } {
  const { log } = options;
  const maxRows = options.maxRows ?? 1000;
  const timeout = options.statementTimeoutMs ?? 60_000;
  if (!Number.isSafeInteger(timeout) || timeout < 0)
    throw new TackError(
      'COMPUTATION_FAILED',
      `statementTimeoutMs must be a non-negative integer, got ${timeout}`,
    );
  const owned = options.pool === undefined;
  const pool =
    options.pool ??
    new (driver().Pool)({
      ...(options.client ?? {}),
      ...(options.connectionString ? { connectionString: options.connectionString } : {}),
      max: options.client?.max ?? 4,
    });
  // An idle client that loses its server emits `error` on the pool; unhandled, that would end the process.
  if (owned) pool.on('error', () => {});

  return {
    runtime: 'postgres',
    log,
    async execute(request: ExecuteRequest): Promise<Receipt> {
      const bound = bindSingleStatement(request, 'positional-dollar', failed);
      let client: pg.PoolClient;
      try {
        client = await pool.connect();
      } catch (error) {
        throw failed(`cannot connect to PostgreSQL: ${errorMessage(error)}`, error);
      }
      let broken: unknown;
      try {
        await client.query('BEGIN READ ONLY');
        // An integer checked above: nothing but digits reaches this text.
        await client.query(`SET LOCAL statement_timeout = ${timeout}`);
        const identity = await client.query<{ pid: string; txid: string }>(
          'SELECT pg_backend_pid()::text AS pid, txid_current()::text AS txid',
        );
        const { pid, txid } = identity.rows[0]!;
        const startedAt = new Date();
        const started = performance.now();
        // `queryMode: 'extended'` even without values: the simple protocol would run `a; b` as two statements.
        const query: pg.QueryArrayConfig & { queryMode: 'extended' } = {
          text: bound.sql,
          values: bound.order.map((name) => request.values[name] ?? null),
          rowMode: 'array',
          types,
          queryMode: 'extended',
        };
        let result: pg.QueryArrayResult;
        try {
          result = await client.query(query);
        } catch (error) {
          throw failed(`PostgreSQL refused the computation: ${describePgError(error)}`, error);
        }
        const durationMs = performance.now() - started;
        const receipt = sqlReceipt({
          jobId: `postgres:${pid}:${txid}`,
          runtime: 'postgres',
          conceptId: request.conceptId,
          executedSql: bound.sql,
          values: request.values,
          columns: result.fields.map((f) => f.name),
          rows: result.rows.slice(0, maxRows),
          startedAt,
          durationMs,
        });
        return log.record(receipt) as Receipt;
      } catch (error) {
        if (TackError.isInstance(error)) throw error;
        broken = error;
        throw failed(`PostgreSQL failed running the computation: ${describePgError(error)}`, error);
      } finally {
        // Nothing a computation does is kept, and a failed statement has aborted the transaction anyway.
        try {
          if (broken === undefined) await client.query('ROLLBACK');
        } catch (error) {
          broken = error;
        }
        client.release(broken instanceof Error ? broken : undefined);
      }
    },
    async close() {
      if (owned) await pool.end();
    },
  };

  function failed(message: string, cause?: unknown): TackError {
    return new TackError('COMPUTATION_FAILED', message, cause === undefined ? {} : { cause });
  }
}

function describePgError(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code)
    ? `${errorMessage(error)} (SQLSTATE ${code})`
    : errorMessage(error);
}
