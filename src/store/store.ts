import { AuditLog } from './audit.js';
import { type Db, openDatabase } from './database.js';
import { EraCache } from './era-cache.js';
import { InputHistory } from './input-history.js';
import { OAuthCredentials } from './oauth-credentials.js';
import { PinRecords } from './pins.js';
import { ScanJudgements } from './scan-judgements.js';
import { SessionIndex } from './sessions.js';
import { TokenCounts } from './token-counts.js';
import { ToolEmbeddings } from './tool-embeddings.js';
import { ToolExamples } from './tool-examples.js';
import { TrustedProjects } from './trusted-projects.js';

/** tack's SQLite store and its repositories, opened once per process and shared by whoever needs them. */
export class TackStore {
  readonly db: Db;
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

  constructor(db: Db) {
    this.db = db;
    this.eraCache = new EraCache(db);
    this.audit = new AuditLog(db);
    this.sessions = new SessionIndex(db);
    this.toolExamples = new ToolExamples(db);
    this.toolEmbeddings = new ToolEmbeddings(db);
    this.oauth = new OAuthCredentials(db);
    this.trustedProjects = new TrustedProjects(db);
    this.pins = new PinRecords(db);
    this.scanJudgements = new ScanJudgements(db);
    this.tokenCounts = new TokenCounts(db);
    this.inputHistory = new InputHistory(db);
  }

  /** Opens (creating and migrating) the store at `file`; `:memory:` for a throwaway one. */
  static open(file: string): TackStore {
    return new TackStore(openDatabase(file));
  }

  close(): void {
    if (!this.db.open) return;
    try {
      this.audit.flush();
    } catch {
      // A store that cannot take the last audit rows still closes.
    }
    this.db.close();
  }
}
