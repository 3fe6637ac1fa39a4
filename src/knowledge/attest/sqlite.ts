import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { errorMessage, TackError } from '../../errors.js';
import {
  type ComputationExecutor,
  type ExecuteRequest,
  type Receipt,
  type ReceiptLog,
  sqlReceipt,
} from './executors.js';
import { parameterType } from './parameters.js';
import { bindSingleStatement } from './sql.js';

/** The database (a file or an open connection), the receipt log and the row bound. */
export interface SqliteExecutorOptions {
  /**
   * A database file, opened read-only (it must exist), or an open handle. A handle may be writable: every
   * statement is still checked with SQLite's own `sqlite3_stmt_readonly` before it runs.
   */
  database: string | Database.Database;
  log: ReceiptLog;
  /** Rows kept in the receipt; a computation's value is its first row. Default 1000. */
  maxRows?: number;
}

/** Runs `runtime: sqlite` computations with better-sqlite3, binding `@name` natively. */
export function sqliteExecutor(options: SqliteExecutorOptions): ComputationExecutor & { log: ReceiptLog } {
  const { log } = options;
  const maxRows = options.maxRows ?? 1000;
  const owned = typeof options.database === 'string';
  let db: Database.Database | undefined = typeof options.database === 'string' ? undefined : options.database;
  const label = typeof options.database === 'string' ? options.database : options.database.name;

  const open = (): Database.Database => {
    if (db) return db;
    try {
      db = new Database(options.database as string, { readonly: true, fileMustExist: true });
      return db;
    } catch (error) {
      throw failed(`cannot open the SQLite database ${label} read-only: ${errorMessage(error)}`, error);
    }
  };

  return {
    runtime: 'sqlite',
    log,
    async execute(request: ExecuteRequest): Promise<Receipt> {
      const bound = bindSingleStatement(request, 'named', failed);
      const handle = open();
      let statement: Database.Statement;
      try {
        statement = handle.prepare(bound.sql);
      } catch (error) {
        throw failed(`SQLite refused the computation: ${errorMessage(error)}`, error);
      }
      // SQLite's own verdict on the compiled statement, so no text pattern can smuggle a write past it.
      if (!statement.readonly)
        throw failed('the statement writes to the database; a computation may only read', undefined, {
          hint: 'A sanctioned computation is a SELECT. Fix the concept; the executor never runs writes.',
        });
      if (!statement.reader)
        throw failed('the statement returns no rows; a computation must return its value');

      const values: Record<string, unknown> = {};
      for (const name of bound.order) {
        const value = request.values[name];
        const parameter = request.parameters.find((p) => p.name === name);
        // better-sqlite3 binds every JS number as REAL; a BigInt binds as INTEGER, which an integer parameter
        // is. SQLite has no boolean: 1 and 0 are what its own TRUE and FALSE mean.
        values[name] =
          typeof value === 'number' && parameter && parameterType(parameter) === 'integer'
            ? BigInt(value)
            : typeof value === 'boolean'
              ? Number(value)
              : (value ?? null);
      }

      const startedAt = new Date();
      const started = performance.now();
      const rows: unknown[][] = [];
      let columns: string[];
      try {
        statement.raw(true);
        columns = statement.columns().map((c) => c.name);
        for (const row of statement.iterate(values) as IterableIterator<unknown[]>) {
          if (rows.length >= maxRows) break;
          rows.push(row);
        }
      } catch (error) {
        throw failed(`SQLite failed running the computation: ${errorMessage(error)}`, error);
      }
      const receipt = sqlReceipt({
        jobId: `sqlite:${randomUUID()}`,
        runtime: 'sqlite',
        conceptId: request.conceptId,
        executedSql: bound.sql,
        values: request.values,
        columns,
        rows,
        startedAt,
        durationMs: performance.now() - started,
      });
      return log.record(receipt) as Receipt;
    },
    async close() {
      if (owned && db?.open) db.close();
      db = undefined;
    },
  };

  function failed(message: string, cause?: unknown, extra: { hint?: string } = {}): TackError {
    return new TackError('COMPUTATION_FAILED', message, {
      subject: { file: label },
      ...(extra.hint ? { hint: extra.hint } : {}),
      ...(cause === undefined ? {} : { cause }),
    });
  }
}
