import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { TackError } from '../../errors.js';
import type { WarningSink } from '../../util/warnings.js';
import { within } from '../../util/within.js';
import type { TackStore } from '../store.js';
import { AUDIT_COMMIT_WAIT_MS, PostgresAuditLog } from './audit.js';
import { AuditSpool } from './audit-spool.js';
import { PostgresDatabase, type PostgresOptions, storeFailed } from './database.js';
import { migratePostgres } from './migrations.js';
import { PostgresPinRecords } from './pins.js';
import {
  PostgresEraCache,
  PostgresInputHistory,
  PostgresOAuthCredentials,
  PostgresScanJudgements,
  PostgresSessionIndex,
  PostgresTokenCounts,
  PostgresToolEmbeddings,
  PostgresToolExamples,
  PostgresTrustedProjects,
} from './repositories.js';

export interface PostgresStoreOptions extends PostgresOptions {
  /**
   * A local folder for audit rows the database cannot take (down, silent, or far behind): they are written to it
   * and go to the database when it answers again (a folder per database inside). Without one such rows are lost.
   */
  spoolDir?: string | undefined;
  onWarning?: WarningSink | undefined;
}

/** The spool folder of one database: its redacted URL hashed, so two stores on one state folder never mix. */
export function spoolFolder(location: string): string {
  return createHash('sha256').update(location).digest('hex').slice(0, 16);
}

/**
 * tack's store on a PostgreSQL server, for several `tack serve` instances (and the CLI on the team's machines)
 * sharing one state: pins, audit, trust, OAuth credentials and the rest. Loaded only when `store.url` names one.
 */
export class PostgresStore implements TackStore {
  readonly engine = 'postgres';
  readonly location: string;
  readonly db: PostgresDatabase;
  readonly eraCache: PostgresEraCache;
  readonly audit: PostgresAuditLog;
  readonly sessions: PostgresSessionIndex;
  readonly toolExamples: PostgresToolExamples;
  readonly toolEmbeddings: PostgresToolEmbeddings;
  readonly oauth: PostgresOAuthCredentials;
  readonly trustedProjects: PostgresTrustedProjects;
  readonly pins: PostgresPinRecords;
  readonly scanJudgements: PostgresScanJudgements;
  readonly tokenCounts: PostgresTokenCounts;
  readonly inputHistory: PostgresInputHistory;

  private constructor(db: PostgresDatabase, options: PostgresStoreOptions) {
    this.db = db;
    this.location = db.location;
    this.eraCache = new PostgresEraCache(db);
    this.audit = new PostgresAuditLog(db, {
      spool: options.spoolDir ? new AuditSpool(join(options.spoolDir, spoolFolder(db.location))) : undefined,
      onWarning: options.onWarning,
    });
    this.sessions = new PostgresSessionIndex(db);
    this.toolExamples = new PostgresToolExamples(db);
    this.toolEmbeddings = new PostgresToolEmbeddings(db);
    this.oauth = new PostgresOAuthCredentials(db);
    this.trustedProjects = new PostgresTrustedProjects(db);
    this.pins = new PostgresPinRecords(db);
    this.scanJudgements = new PostgresScanJudgements(db);
    this.tokenCounts = new PostgresTokenCounts(db);
    this.inputHistory = new PostgresInputHistory(db);
  }

  /** Connects and runs pending migrations (once, under an advisory lock, whoever starts first). */
  static async open(url: string, options: PostgresStoreOptions = {}): Promise<PostgresStore> {
    const db = new PostgresDatabase(url, options);
    try {
      await migratePostgres(db);
    } catch (error) {
      await db.close().catch(() => {});
      if (TackError.isInstance(error)) throw error;
      throw storeFailed(db.location, error);
    }
    return new PostgresStore(db, options);
  }

  async ping(): Promise<void> {
    await this.db.query('SELECT 1');
  }

  /**
   * Writes the audit rows waiting, for up to AUDIT_COMMIT_WAIT_MS: a database that answers takes them in a few
   * batches; one that does not would hold a drain for a timed-out batch per 500 rows. What is left then is dropped.
   */
  async close(): Promise<void> {
    const waited = await within(this.audit.drain(), AUDIT_COMMIT_WAIT_MS);
    if (!waited.done)
      this.audit.abandon(
        `the store closed with audit rows the database did not take within ${AUDIT_COMMIT_WAIT_MS / 1000} s`,
      );
    await this.audit.close();
    await this.db.close();
    // The INSERT that was under way has ended with the pool: its rows are written or spooled before close returns.
    await this.audit.drain();
  }
}
