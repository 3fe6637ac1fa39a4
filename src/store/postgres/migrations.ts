import { TackError } from '../../errors.js';
import { maxOf } from '../../util/arrays.js';
import type { PostgresDatabase } from './database.js';

/**
 * The PostgreSQL store's schema, as versioned migrations applied in order (the SQLite store keeps its own list in
 * store/database.ts: the engines differ in types, not in tables). `tack_schema` records each version applied. A
 * database migrated by a newer tack (a version this build does not know) is refused rather than misread.
 * Times are kept as ISO text and milliseconds since the epoch as BIGINT, as in SQLite, so both engines answer the
 * same values; ordering uses COLLATE "C" where SQLite's binary order shows.
 */
export const POSTGRES_MIGRATIONS: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  {
    version: 1,
    name: 'era verdicts, audit, sessions, tool examples, pins, trusted projects, OAuth, embeddings, token counts',
    sql: `
      CREATE TABLE era_verdicts (
        key TEXT PRIMARY KEY,
        verdict TEXT NOT NULL,
        stored_at BIGINT NOT NULL
      );
      CREATE TABLE audit (
        id BIGSERIAL PRIMARY KEY,
        at TEXT NOT NULL,
        client TEXT NOT NULL,
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        args_sha256 TEXT NOT NULL,
        duration_ms INTEGER NOT NULL,
        outcome TEXT NOT NULL,
        detail TEXT
      );
      CREATE INDEX audit_at ON audit (at);
      CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        parent_id TEXT,
        started_at TEXT NOT NULL,
        updated_at TEXT NOT NULL,
        cwd TEXT NOT NULL,
        model TEXT NOT NULL,
        title TEXT,
        status TEXT NOT NULL,
        file TEXT NOT NULL,
        guidelines_hash TEXT,
        steps INTEGER NOT NULL DEFAULT 0,
        input_tokens BIGINT NOT NULL DEFAULT 0,
        output_tokens BIGINT NOT NULL DEFAULT 0,
        cost_usd DOUBLE PRECISION NOT NULL DEFAULT 0
      );
      CREATE INDEX sessions_started_at ON sessions (started_at);
      CREATE INDEX sessions_cwd_started_at ON sessions (cwd, started_at);
      CREATE TABLE tool_examples (
        server TEXT NOT NULL,
        tool TEXT NOT NULL,
        query TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (server, tool, query)
      );
      CREATE TABLE pins (
        identity TEXT NOT NULL,
        kind TEXT NOT NULL,
        name TEXT NOT NULL,
        sha256 TEXT NOT NULL,
        definition TEXT NOT NULL,
        pinned_at TEXT NOT NULL,
        pending_sha256 TEXT,
        pending_definition TEXT,
        pending_reason TEXT,
        pending_since TEXT,
        PRIMARY KEY (identity, kind, name)
      );
      CREATE TABLE trusted_projects (
        root TEXT PRIMARY KEY,
        files TEXT NOT NULL,
        trusted_at TEXT NOT NULL
      );
      CREATE TABLE oauth_clients (
        issuer TEXT NOT NULL,
        resource TEXT NOT NULL,
        client TEXT NOT NULL,
        registered_at BIGINT NOT NULL,
        PRIMARY KEY (issuer, resource)
      );
      CREATE TABLE oauth_tokens (
        issuer TEXT NOT NULL,
        resource TEXT NOT NULL,
        server TEXT NOT NULL,
        tokens TEXT NOT NULL,
        expires_at BIGINT,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (issuer, resource)
      );
      CREATE TABLE tool_embeddings (
        model TEXT NOT NULL,
        digest TEXT NOT NULL,
        vector BYTEA NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (model, digest)
      );
      CREATE TABLE token_counts (
        tokenizer TEXT NOT NULL,
        digest TEXT NOT NULL,
        tokens INTEGER NOT NULL,
        PRIMARY KEY (tokenizer, digest)
      );`,
  },
  {
    version: 2,
    name: 'scan judgements and input history',
    sql: `
      CREATE TABLE scan_judgements (
        model TEXT NOT NULL,
        digest TEXT NOT NULL,
        verdict TEXT NOT NULL,
        reason TEXT NOT NULL,
        at TEXT NOT NULL,
        PRIMARY KEY (model, digest)
      );
      CREATE TABLE input_history (
        id BIGSERIAL PRIMARY KEY,
        project TEXT NOT NULL,
        text TEXT NOT NULL,
        at TEXT NOT NULL
      );
      CREATE INDEX input_history_project ON input_history (project, id);`,
  },
  {
    version: 3,
    name: 'the projects each pinned identity was seen in',
    sql: `
      CREATE TABLE pin_projects (
        identity TEXT NOT NULL,
        project TEXT NOT NULL,
        seen_at TEXT NOT NULL,
        PRIMARY KEY (identity, project)
      );`,
  },
];

/**
 * The advisory lock every instance takes to migrate: instances started together wait for the first, which runs the
 * pending migrations once; the others then find nothing to do. 'tack' in ASCII.
 */
export const MIGRATION_LOCK = 0x7461636b;

/** Runs the pending migrations in one transaction, under the advisory lock; returns the versions applied. */
export async function migratePostgres(db: PostgresDatabase): Promise<number[]> {
  return db.transaction(async (query) => {
    // Released at COMMIT or ROLLBACK, whatever happens in between.
    await query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await query(
      `CREATE TABLE IF NOT EXISTS tack_schema (
         version INTEGER PRIMARY KEY,
         name TEXT NOT NULL,
         applied_at TIMESTAMPTZ NOT NULL DEFAULT now()
       )`,
    );
    const rows = await query<{ version: number }>('SELECT version FROM tack_schema');
    const applied = new Set(rows.map((r) => Number(r.version)));
    const known = new Set(POSTGRES_MIGRATIONS.map((m) => m.version));
    const newest = maxOf([0, ...applied]);
    if ([...applied].some((v) => !known.has(v)))
      throw new TackError(
        'STORE_FAILED',
        `${db.location}: the store has schema version ${newest}, newer than this tack understands (${maxOf([...known])})`,
        { hint: 'Upgrade tack on this machine to the version the other instances run.' },
      );
    const done: number[] = [];
    for (const migration of POSTGRES_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await query(migration.sql);
      await query('INSERT INTO tack_schema (version, name) VALUES ($1, $2)', [
        migration.version,
        migration.name,
      ]);
      done.push(migration.version);
    }
    return done;
  });
}
