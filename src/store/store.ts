import { type AuditLog, SqliteAuditLog } from './audit.js';
import { type Db, openDatabase } from './database.js';
import { type EraCache, SqliteEraCache } from './era-cache.js';
import { type InputHistory, SqliteInputHistory } from './input-history.js';
import { type OAuthCredentials, SqliteOAuthCredentials } from './oauth-credentials.js';
import { type PinRecords, SqlitePinRecords } from './pins.js';
import { type ScanJudgements, SqliteScanJudgements } from './scan-judgements.js';
import { type SessionIndex, SqliteSessionIndex } from './sessions.js';
import { SqliteTokenCounts, type TokenCounts } from './token-counts.js';
import { SqliteToolEmbeddings, type ToolEmbeddings } from './tool-embeddings.js';
import { SqliteToolExamples, type ToolExamples } from './tool-examples.js';
import { SqliteTrustedProjects, type TrustedProjects } from './trusted-projects.js';

/** Which database holds the store: a SQLite file per machine (the default), or a PostgreSQL server a team shares. */
export type StoreEngine = 'sqlite' | 'postgres';

/**
 * tack's store: one interface over its repositories, whatever the engine. Every method is asynchronous because
 * PostgreSQL is; the SQLite store answers synchronously inside. Opened once per process by the composition root
 * (store/open.ts) and handed to whoever needs it.
 */
export interface TackStore {
  readonly engine: StoreEngine;
  /** The file, or the server's URL without its password: for messages and `tack serve`'s start line. */
  readonly location: string;
  readonly eraCache: EraCache;
  readonly audit: AuditLog;
  readonly sessions: SessionIndex;
  readonly toolExamples: ToolExamples;
  readonly toolEmbeddings: ToolEmbeddings;
  readonly oauth: OAuthCredentials;
  readonly trustedProjects: TrustedProjects;
  readonly pins: PinRecords;
  readonly scanJudgements: ScanJudgements;
  readonly tokenCounts: TokenCounts;
  readonly inputHistory: InputHistory;
  /** One round trip to the database (readiness checks): rejects when it cannot be reached. */
  ping(): Promise<void>;
  /** Waits for writes in flight, then closes the connection(s). Closing twice does nothing. */
  close(): Promise<void>;
}

/**
 * `TackStore.open(file)`: a SQLite store, as before the interface existed (tests, benches and library users open
 * throwaway stores this way). The composition roots use store/open.ts, which also opens PostgreSQL.
 */
export const TackStore = {
  /** Opens (or creates) a SQLite store in a file, `:memory:` for one that is gone on close. */
  open(file: string): SqliteStore {
    return SqliteStore.open(file);
  },
};

/** tack's SQLite store and its repositories, opened once per process and shared by whoever needs them. */
export class SqliteStore implements TackStore {
  readonly engine = 'sqlite';
  readonly location: string;
  readonly db: Db;
  readonly eraCache: SqliteEraCache;
  readonly audit: SqliteAuditLog;
  readonly sessions: SqliteSessionIndex;
  readonly toolExamples: SqliteToolExamples;
  readonly toolEmbeddings: SqliteToolEmbeddings;
  readonly oauth: SqliteOAuthCredentials;
  readonly trustedProjects: SqliteTrustedProjects;
  readonly pins: SqlitePinRecords;
  readonly scanJudgements: SqliteScanJudgements;
  readonly tokenCounts: SqliteTokenCounts;
  readonly inputHistory: SqliteInputHistory;

  constructor(db: Db) {
    this.db = db;
    this.location = db.name;
    this.eraCache = new SqliteEraCache(db);
    this.audit = new SqliteAuditLog(db);
    this.sessions = new SqliteSessionIndex(db);
    this.toolExamples = new SqliteToolExamples(db);
    this.toolEmbeddings = new SqliteToolEmbeddings(db);
    this.oauth = new SqliteOAuthCredentials(db);
    this.trustedProjects = new SqliteTrustedProjects(db);
    this.pins = new SqlitePinRecords(db);
    this.scanJudgements = new SqliteScanJudgements(db);
    this.tokenCounts = new SqliteTokenCounts(db);
    this.inputHistory = new SqliteInputHistory(db);
  }

  /** Opens (creating and migrating) the store at `file`; `:memory:` for a throwaway one. */
  static open(file: string): SqliteStore {
    return new SqliteStore(openDatabase(file));
  }

  async ping(): Promise<void> {
    this.db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.closeSync();
  }

  /** For exit paths that cannot wait (a process leaving on a signal). */
  closeSync(): void {
    if (!this.db.open) return;
    try {
      this.audit.flushSync();
    } catch {
      // A store that cannot take the last audit rows still closes.
    }
    this.db.close();
  }
}
