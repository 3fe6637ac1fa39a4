import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { errorMessage, TackError } from '../errors.js';

/** The better-sqlite3 handle type, re-exported so repositories need not import the driver themselves. */
export type Db = Database.Database;

/** How long a statement waits for another process's lock before it fails (SQLite's busy_timeout). */
const BUSY_TIMEOUT_MS = 5_000;

/**
 * Schema migrations, applied in order; `user_version` records how many ran. A store written by a newer tack
 * (more migrations than this build knows) is refused rather than misread.
 */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE era_verdicts (
     key TEXT PRIMARY KEY,
     verdict TEXT NOT NULL,
     stored_at INTEGER NOT NULL
   )`,
  `CREATE TABLE audit (
     id INTEGER PRIMARY KEY,
     at TEXT NOT NULL,
     client TEXT NOT NULL,
     server TEXT NOT NULL,
     tool TEXT NOT NULL,
     args_sha256 TEXT NOT NULL,
     duration_ms INTEGER NOT NULL,
     outcome TEXT NOT NULL,
     detail TEXT
   );
   CREATE INDEX audit_at ON audit (at)`,
  `CREATE TABLE sessions (
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
     input_tokens INTEGER NOT NULL DEFAULT 0,
     output_tokens INTEGER NOT NULL DEFAULT 0,
     cost_usd REAL NOT NULL DEFAULT 0
   );
   CREATE INDEX sessions_started_at ON sessions (started_at);
   CREATE INDEX sessions_cwd_started_at ON sessions (cwd, started_at)`,
  `CREATE TABLE tool_examples (
     server TEXT NOT NULL,
     tool TEXT NOT NULL,
     query TEXT NOT NULL,
     at TEXT NOT NULL,
     PRIMARY KEY (server, tool, query)
   )`,
  // Trust on first use: the definition a server identity showed first (or the user last accepted), and a changed
  // one waiting for review. `kind`: tool, instructions, prompt, skill.
  `CREATE TABLE pins (
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
   )`,
  // Projects whose servers, skills and hooks the user trusted, with the hash of each project file at that moment.
  `CREATE TABLE trusted_projects (
     root TEXT PRIMARY KEY,
     files TEXT NOT NULL,
     trusted_at TEXT NOT NULL
   )`,
  // OAuth for remote servers: client registrations and tokens per authorization server (issuer) and protected
  // resource (the MCP endpoint). Times in ms since the epoch.
  `CREATE TABLE oauth_clients (
     issuer TEXT NOT NULL,
     resource TEXT NOT NULL,
     client TEXT NOT NULL,
     registered_at INTEGER NOT NULL,
     PRIMARY KEY (issuer, resource)
   );
   CREATE TABLE oauth_tokens (
     issuer TEXT NOT NULL,
     resource TEXT NOT NULL,
     server TEXT NOT NULL,
     tokens TEXT NOT NULL,
     expires_at INTEGER,
     updated_at INTEGER NOT NULL,
     PRIMARY KEY (issuer, resource)
   )`,
  // Tool search's embedding vectors (float32, little-endian), by model (and endpoint) and the SHA-256 of the text
  // embedded: a definition is embedded again only when it changes.
  `CREATE TABLE tool_embeddings (
     model TEXT NOT NULL,
     digest TEXT NOT NULL,
     vector BLOB NOT NULL,
     at TEXT NOT NULL,
     PRIMARY KEY (model, digest)
   )`,
  // Token counts by tokenizer and the SHA-256 of the text counted: a warm `tack tools` loads no tokenizer.
  `CREATE TABLE token_counts (
     tokenizer TEXT NOT NULL,
     digest TEXT NOT NULL,
     tokens INTEGER NOT NULL,
     PRIMARY KEY (tokenizer, digest)
   ) WITHOUT ROWID`,
  // The poisoning scan's LLM judge: a verdict per model and definition digest (security/judge.ts).
  `CREATE TABLE scan_judgements (
     model TEXT NOT NULL,
     digest TEXT NOT NULL,
     verdict TEXT NOT NULL,
     reason TEXT NOT NULL,
     at TEXT NOT NULL,
     PRIMARY KEY (model, digest)
   )`,
  // What was typed at tack chat's prompt, per project folder, for recall with the up arrow (InputHistory).
  `CREATE TABLE input_history (
     id INTEGER PRIMARY KEY AUTOINCREMENT,
     project TEXT NOT NULL,
     text TEXT NOT NULL,
     at TEXT NOT NULL
   );
   CREATE INDEX input_history_project ON input_history (project, id)`,
  // Which projects each pinned identity was seen in (pins are kept per identity, which two projects may share):
  // `tack pins list` shows the current project's, `--all` every project's. Pins older than this table have none.
  `CREATE TABLE pin_projects (
     identity TEXT NOT NULL,
     project TEXT NOT NULL,
     seen_at TEXT NOT NULL,
     PRIMARY KEY (identity, project)
   )`,
];

/** The SQLite store in the state directory. Opening it creates the file and runs pending migrations. */
export function openDatabase(file: string): Db {
  let db: Db | undefined;
  try {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    db = new Database(file);
    enableWal(db);
    // With WAL, NORMAL syncs at checkpoints rather than at every commit: the audit log writes a row per call,
    // and an fsync per call would dominate the gateway's latency. A crash can lose the last few rows, not
    // corrupt the database.
    db.pragma('synchronous = NORMAL');
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    migrate(db, file);
    return db;
  } catch (error) {
    // A store that did not open holds no file handle (a long-running host would keep it, and its lock, for nothing).
    if (db?.open) db.close();
    if (TackError.isInstance(error)) throw error;
    throw new TackError('STORE_FAILED', `${file}: cannot open the tack store (${errorMessage(error)})`, {
      subject: { file },
      hint: 'Check that the state directory is writable (and not held by another process), or point TACK_HOME elsewhere.',
      cause: error,
    });
  }
}

/**
 * Switches the file to WAL (it stays so: later opens find it done). A new file's switch needs the only lock on it, and
 * two processes making one new store at once can each hold a read lock waiting for the other: SQLite answers one
 * of them BUSY at once instead of running its busy timeout. That one waits a moment and tries again, up to the
 * busy timeout.
 */
function enableWal(db: Db): void {
  const deadline = Date.now() + BUSY_TIMEOUT_MS;
  for (;;) {
    try {
      db.pragma('journal_mode = WAL');
      return;
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'SQLITE_BUSY' || Date.now() > deadline) throw error;
      // A synchronous pause (opening is synchronous), jittered so the two do not meet again.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 + Math.floor(Math.random() * 40));
    }
  }
}

function migrate(db: Db, file: string): void {
  const tooNew = (version: number) => {
    db.close();
    return new TackError(
      'STORE_FAILED',
      `${file}: the store has schema version ${version}, newer than this tack understands (${MIGRATIONS.length})`,
      { subject: { file }, hint: 'Upgrade tack, or use another TACK_HOME.' },
    );
  };
  const version = db.pragma('user_version', { simple: true }) as number;
  if (version > MIGRATIONS.length) throw tooNew(version);
  if (version === MIGRATIONS.length) return;
  // Two processes opening a new store at once (three `tack serve` started together, two commands in one shell)
  // both see the old version: the write lock is taken first (IMMEDIATE waits for it, up to busy_timeout) and the
  // version read again under it, so the second finds the migrations done instead of failing on "table exists".
  const current = db
    .transaction(() => {
      const locked = db.pragma('user_version', { simple: true }) as number;
      if (locked >= MIGRATIONS.length) return locked;
      for (const sql of MIGRATIONS.slice(locked)) db.exec(sql);
      db.pragma(`user_version = ${MIGRATIONS.length}`);
      return MIGRATIONS.length;
    })
    .immediate();
  if (current > MIGRATIONS.length) throw tooNew(current);
}
