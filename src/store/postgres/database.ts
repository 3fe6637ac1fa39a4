import type pg from 'pg';
import { errorMessage, requireOptional, TackError } from '../../errors.js';

/** Runs one statement and gives its rows. */
export type Query = <R = Record<string, unknown>>(sql: string, params?: readonly unknown[]) => Promise<R[]>;

export interface PostgresOptions {
  /** Connections kept open (default 10): the gateway's audit batches and lookups share them. */
  poolSize?: number | undefined;
  /**
   * How long the client waits for a statement's answer before it gives up and drops the connection (default 35 s:
   * a little past the server's own statement_timeout, which a server that does not answer cannot enforce).
   */
  queryTimeoutMs?: number | undefined;
  /** An idle connection that breaks (the server restarted) is reported here, not thrown; default ignored. */
  onError?: ((error: Error) => void) | undefined;
}

/** The URL without its password, for messages. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/**
 * A pool of connections to the PostgreSQL server a team's tack instances share. Every statement is a round trip;
 * a transaction holds one connection for its statements.
 */
export class PostgresDatabase {
  readonly #pool: pg.Pool;
  readonly location: string;
  /** Statements under way: close() lets them finish (a cache write nobody awaited, the last audit batch). */
  readonly #inFlight = new Set<Promise<unknown>>();
  #closed = false;

  constructor(url: string, options: PostgresOptions = {}) {
    this.location = redactedUrl(url);
    // The driver is an optional package: loaded here, by the first PostgreSQL store, never by SQLite users.
    const { Pool } = requireOptional<typeof pg>('A PostgreSQL store (store.url)', 'pg');
    this.#pool = new Pool({
      connectionString: url,
      max: options.poolSize ?? 10,
      application_name: 'tack',
      // A server that does not answer fails a request, not hangs it: readiness then reports the store down.
      connectionTimeoutMillis: 10_000,
      statement_timeout: 30_000,
      // The server enforces statement_timeout only while it answers: a partition or a hung server would hold a
      // statement (and its connection) forever. The client gives up a little later, and the connection is dropped.
      query_timeout: options.queryTimeoutMs ?? 35_000,
      keepAlive: true,
      idleTimeoutMillis: 30_000,
    });
    // Without a listener an idle connection's error (a restarted server) would end the process.
    this.#pool.on('error', (error) => options.onError?.(error));
  }

  readonly query: Query = <R>(sql: string, params: readonly unknown[] = []) =>
    this.#track(this.#pool.query(sql, params as unknown[]).then((result) => result.rows as R[]));

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work);
    const done = () => this.#inFlight.delete(work);
    work.then(done, done);
    return work;
  }

  /** Runs `fn` in one transaction on one connection; rolled back when it throws. */
  transaction<T>(fn: (query: Query) => Promise<T>): Promise<T> {
    return this.#track(this.#transaction(fn));
  }

  async #transaction<T>(fn: (query: Query) => Promise<T>): Promise<T> {
    const client = await this.#pool.connect();
    const query: Query = async <R>(sql: string, params: readonly unknown[] = []) =>
      (await client.query(sql, params as unknown[])).rows as R[];
    let failure: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await fn(query);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      failure = error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      // A failed transaction's connection is dropped, not pooled, and no ROLLBACK is sent: after a timed-out
      // statement the driver would queue it behind that statement for another full timeout, and the server rolls
      // back a transaction whose connection closes anyway.
      client.release(failure);
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    while (this.#inFlight.size > 0) await Promise.allSettled([...this.#inFlight]);
    await this.#pool.end();
  }
}

/** A store that cannot be reached or migrated, named by its redacted URL. */
export function storeFailed(location: string, error: unknown): TackError {
  return new TackError('STORE_FAILED', `${location}: cannot open the tack store (${errorMessage(error)})`, {
    hint: 'Check store.url (or TACK_STORE_URL): the server, the database, the user and its password.',
    cause: error,
  });
}
