import type { StoredOAuthClientInformation } from '@modelcontextprotocol/client';
import { type EraCache, type EraVerdict, readEraVerdict, type StoredEraVerdict } from '../era-cache.js';
import { historyEntry, historyLimit, type InputHistory, MAX_HISTORY_ENTRIES } from '../input-history.js';
import {
  type OAuthClientRecord,
  type OAuthCredentials,
  type OAuthTokenRecord,
  oauthTokenRecord,
  parseStored,
  type TokenRow,
} from '../oauth-credentials.js';
import { type ScanJudgements, type StoredJudgement, storedJudgement } from '../scan-judgements.js';
import {
  findSessionByPrefix,
  type SessionColumns,
  type SessionIndex,
  type SessionRow,
  sessionRowOf,
  sessionValues,
} from '../sessions.js';
import { TOKEN_COUNT_CHUNK, type TokenCounts } from '../token-counts.js';
import { EMBEDDING_CHUNK, type ToolEmbeddings, vectorBytes, vectorOf } from '../tool-embeddings.js';
import {
  EXAMPLES_PER_TOOL,
  exampleText,
  groupExamples,
  type ToolExample,
  type ToolExamples,
} from '../tool-examples.js';
import {
  type TrustedProject,
  type TrustedProjectRow,
  type TrustedProjects,
  trustedProjectOf,
} from '../trusted-projects.js';
import type { PostgresDatabase, Query } from './database.js';

/*
 * The PostgreSQL side of each repository: the same statements as the SQLite store, in PostgreSQL's dialect. Every
 * write is one statement (an upsert) or one transaction, so instances writing at once never see half of another's
 * write; the last upsert of a row wins, as in SQLite.
 */

export class PostgresEraCache implements EraCache {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async get(key: string, now = Date.now()): Promise<StoredEraVerdict | undefined> {
    const [row] = await this.#db.query<{ verdict: string; stored_at: string }>(
      'SELECT verdict, stored_at FROM era_verdicts WHERE key = $1',
      [key],
    );
    if (!row) return undefined;
    const verdict = readEraVerdict(row.verdict, Number(row.stored_at), now);
    if (verdict !== 'damaged') return verdict;
    await this.delete(key);
    return undefined;
  }

  async put(key: string, verdict: EraVerdict, now = Date.now()): Promise<void> {
    await this.#db.query(
      `INSERT INTO era_verdicts (key, verdict, stored_at) VALUES ($1, $2, $3)
       ON CONFLICT (key) DO UPDATE SET verdict = excluded.verdict, stored_at = excluded.stored_at`,
      [key, JSON.stringify(verdict), now],
    );
  }

  async delete(key: string): Promise<void> {
    await this.#db.query('DELETE FROM era_verdicts WHERE key = $1', [key]);
  }
}

export class PostgresTokenCounts implements TokenCounts {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async get(tokenizer: string, digests: readonly string[]): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (let i = 0; i < digests.length; i += TOKEN_COUNT_CHUNK) {
      const rows = await this.#db.query<{ digest: string; tokens: number }>(
        'SELECT digest, tokens FROM token_counts WHERE tokenizer = $1 AND digest = ANY($2::text[])',
        [tokenizer, digests.slice(i, i + TOKEN_COUNT_CHUNK)],
      );
      for (const row of rows) out.set(row.digest, Number(row.tokens));
    }
    return out;
  }

  async put(tokenizer: string, counts: ReadonlyMap<string, number>): Promise<void> {
    if (counts.size === 0) return;
    // One statement for the lot: arrays unnested into rows.
    await this.#db.query(
      `INSERT INTO token_counts (tokenizer, digest, tokens)
       SELECT $1, d, t FROM unnest($2::text[], $3::int[]) AS u(d, t)
       ON CONFLICT (tokenizer, digest) DO UPDATE SET tokens = excluded.tokens`,
      [tokenizer, [...counts.keys()], [...counts.values()]],
    );
  }
}

export class PostgresToolEmbeddings implements ToolEmbeddings {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async get(model: string, digests: readonly string[]): Promise<Map<string, Float32Array>> {
    const out = new Map<string, Float32Array>();
    for (let i = 0; i < digests.length; i += EMBEDDING_CHUNK) {
      const rows = await this.#db.query<{ digest: string; vector: Buffer }>(
        'SELECT digest, vector FROM tool_embeddings WHERE model = $1 AND digest = ANY($2::text[])',
        [model, digests.slice(i, i + EMBEDDING_CHUNK)],
      );
      for (const row of rows) out.set(row.digest, vectorOf(row.vector));
    }
    return out;
  }

  async put(model: string, entries: ReadonlyArray<{ digest: string; vector: Float32Array }>): Promise<void> {
    if (entries.length === 0) return;
    const at = new Date().toISOString();
    await this.#db.transaction(async (query) => {
      for (const { digest, vector } of entries)
        await query(
          `INSERT INTO tool_embeddings (model, digest, vector, at) VALUES ($1, $2, $3, $4)
           ON CONFLICT (model, digest) DO UPDATE SET vector = excluded.vector, at = excluded.at`,
          [model, digest, vectorBytes(vector), at],
        );
    });
  }

  async count(model: string): Promise<number> {
    const [row] = await this.#db.query<{ n: string }>(
      'SELECT COUNT(*) AS n FROM tool_embeddings WHERE model = $1',
      [model],
    );
    return Number(row?.n ?? 0);
  }
}

export class PostgresToolExamples implements ToolExamples {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async record(server: string, tool: string, query: string, at = new Date().toISOString()): Promise<void> {
    await this.#db.transaction((q) => this.#record(q, server, tool, query, at));
  }

  async #record(query: Query, server: string, tool: string, text: string, at: string): Promise<void> {
    const kept = exampleText(text);
    if (!kept) return;
    // An imported example keeps its own time; a newer one already kept for the same words wins.
    await query(
      `INSERT INTO tool_examples (server, tool, query, at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (server, tool, query) DO UPDATE SET at = GREATEST(tool_examples.at, excluded.at)`,
      [server, tool, kept, at],
    );
    await query(
      `DELETE FROM tool_examples WHERE server = $1 AND tool = $2 AND query NOT IN (
         SELECT query FROM tool_examples WHERE server = $1 AND tool = $2 ORDER BY at COLLATE "C" DESC LIMIT $3)`,
      [server, tool, EXAMPLES_PER_TOOL],
    );
  }

  async rows(): Promise<ToolExample[]> {
    return this.#db.query<ToolExample>(
      `SELECT server, tool, query, at FROM tool_examples
       ORDER BY at COLLATE "C", server COLLATE "C", tool COLLATE "C", query COLLATE "C"`,
    );
  }

  async import(examples: readonly ToolExample[]): Promise<number> {
    await this.#db.transaction(async (query) => {
      for (const e of examples) await this.#record(query, e.server, e.tool, e.query, e.at);
    });
    return examples.length;
  }

  async all(): Promise<Map<string, Map<string, string[]>>> {
    return groupExamples(
      await this.#db.query<{ server: string; tool: string; query: string }>(
        'SELECT server, tool, query FROM tool_examples ORDER BY at COLLATE "C" DESC',
      ),
    );
  }
}

export class PostgresTrustedProjects implements TrustedProjects {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async get(root: string): Promise<TrustedProject | undefined> {
    const [row] = await this.#db.query<TrustedProjectRow>(
      'SELECT root, files, trusted_at FROM trusted_projects WHERE root = $1',
      [root],
    );
    return row ? trustedProjectOf(row) : undefined;
  }

  async set(
    root: string,
    files: Readonly<Record<string, string>>,
    trustedAt = new Date().toISOString(),
  ): Promise<TrustedProject> {
    await this.#db.query(
      `INSERT INTO trusted_projects (root, files, trusted_at) VALUES ($1, $2, $3)
       ON CONFLICT (root) DO UPDATE SET files = excluded.files, trusted_at = excluded.trusted_at`,
      [root, JSON.stringify(files), trustedAt],
    );
    return { root, files: { ...files }, trustedAt };
  }

  async delete(root: string): Promise<boolean> {
    return (
      (await this.#db.query('DELETE FROM trusted_projects WHERE root = $1 RETURNING root', [root])).length > 0
    );
  }

  async list(): Promise<TrustedProject[]> {
    return (
      await this.#db.query<TrustedProjectRow>(
        'SELECT root, files, trusted_at FROM trusted_projects ORDER BY root COLLATE "C"',
      )
    ).map(trustedProjectOf);
  }
}

export class PostgresOAuthCredentials implements OAuthCredentials {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async getClient(issuer: string, resource: string): Promise<OAuthClientRecord | undefined> {
    const [row] = await this.#db.query<{ client: string; registered_at: string }>(
      'SELECT client, registered_at FROM oauth_clients WHERE issuer = $1 AND resource = $2',
      [issuer, resource],
    );
    if (!row) return undefined;
    const client = parseStored<StoredOAuthClientInformation>(row.client);
    return client && { issuer, resource, client, registeredAt: Number(row.registered_at) };
  }

  async putClient(issuer: string, resource: string, client: StoredOAuthClientInformation): Promise<void> {
    await this.#db.query(
      `INSERT INTO oauth_clients (issuer, resource, client, registered_at) VALUES ($1, $2, $3, $4)
       ON CONFLICT (issuer, resource) DO UPDATE SET client = excluded.client, registered_at = excluded.registered_at`,
      [issuer, resource, JSON.stringify(client), Date.now()],
    );
  }

  async deleteClients(resource: string, issuer?: string): Promise<number> {
    const rows =
      issuer === undefined
        ? await this.#db.query('DELETE FROM oauth_clients WHERE resource = $1 RETURNING 1', [resource])
        : await this.#db.query('DELETE FROM oauth_clients WHERE resource = $1 AND issuer = $2 RETURNING 1', [
            resource,
            issuer,
          ]);
    return rows.length;
  }

  async getTokens(resource: string, issuer?: string): Promise<OAuthTokenRecord | undefined> {
    const [row] =
      issuer === undefined
        ? await this.#db.query<TokenRow>(
            'SELECT * FROM oauth_tokens WHERE resource = $1 ORDER BY updated_at DESC, issuer COLLATE "C" DESC LIMIT 1',
            [resource],
          )
        : await this.#db.query<TokenRow>('SELECT * FROM oauth_tokens WHERE resource = $1 AND issuer = $2', [
            resource,
            issuer,
          ]);
    return row && oauthTokenRecord(row);
  }

  async putTokens(record: Omit<OAuthTokenRecord, 'updatedAt'>): Promise<void> {
    await this.#db.query(
      `INSERT INTO oauth_tokens (issuer, resource, server, tokens, expires_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (issuer, resource) DO UPDATE SET server = excluded.server, tokens = excluded.tokens,
         expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
      [
        record.issuer,
        record.resource,
        record.server,
        JSON.stringify(record.tokens),
        record.expiresAt ?? null,
        Date.now(),
      ],
    );
  }

  async deleteTokens(resource: string, issuer?: string): Promise<number> {
    const rows =
      issuer === undefined
        ? await this.#db.query('DELETE FROM oauth_tokens WHERE resource = $1 RETURNING 1', [resource])
        : await this.#db.query('DELETE FROM oauth_tokens WHERE resource = $1 AND issuer = $2 RETURNING 1', [
            resource,
            issuer,
          ]);
    return rows.length;
  }

  async listTokens(): Promise<OAuthTokenRecord[]> {
    return (await this.#db.query<TokenRow>('SELECT * FROM oauth_tokens ORDER BY updated_at DESC')).flatMap(
      (row) => oauthTokenRecord(row) ?? [],
    );
  }
}

const SESSION_ORDER = 'ORDER BY started_at COLLATE "C" DESC, id COLLATE "C" DESC';

export class PostgresSessionIndex implements SessionIndex {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  /**
   * One session's upserts in the order they were made: each writes the whole row, and two in flight at once on
   * two pool connections could land in either order, leaving the older row in place of the newer.
   */
  readonly #writes = new Map<string, Promise<void>>();

  upsert(row: SessionRow): Promise<void> {
    const previous = this.#writes.get(row.id) ?? Promise.resolve();
    const write = previous.catch(() => {}).then(() => this.#upsert(row));
    this.#writes.set(row.id, write);
    const forget = () => {
      if (this.#writes.get(row.id) === write) this.#writes.delete(row.id);
    };
    write.then(forget, forget);
    return write;
  }

  async #upsert(row: SessionRow): Promise<void> {
    await this.#db.query(
      `INSERT INTO sessions (id, parent_id, started_at, updated_at, cwd, model, title, status, file, guidelines_hash,
         steps, input_tokens, output_tokens, cost_usd)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
       ON CONFLICT (id) DO UPDATE SET parent_id = excluded.parent_id, started_at = excluded.started_at,
         updated_at = excluded.updated_at, cwd = excluded.cwd, model = excluded.model, title = excluded.title,
         status = excluded.status, file = excluded.file, guidelines_hash = excluded.guidelines_hash,
         steps = excluded.steps, input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens,
         cost_usd = excluded.cost_usd`,
      sessionValues(row),
    );
  }

  async get(id: string): Promise<SessionRow | undefined> {
    const [row] = await this.#db.query<SessionColumns>('SELECT * FROM sessions WHERE id = $1', [id]);
    return row ? sessionRowOf(row) : undefined;
  }

  async list(options: { limit?: number; cwd?: string } = {}): Promise<SessionRow[]> {
    const limit = options.limit ?? 50;
    const rows =
      options.cwd === undefined
        ? await this.#db.query<SessionColumns>(`SELECT * FROM sessions ${SESSION_ORDER} LIMIT $1`, [limit])
        : await this.#db.query<SessionColumns>(
            `SELECT * FROM sessions WHERE cwd = $1 ${SESSION_ORDER} LIMIT $2`,
            [options.cwd, limit],
          );
    return rows.map(sessionRowOf);
  }

  findByPrefix(prefix: string): Promise<SessionRow | undefined> {
    return findSessionByPrefix(
      prefix,
      (id) => this.get(id),
      async (start, tail) =>
        (
          await this.#db.query<SessionColumns>(
            `SELECT * FROM sessions WHERE id LIKE $1 ESCAPE '\\' OR id LIKE $2 ESCAPE '\\' ${SESSION_ORDER}`,
            [start, tail],
          )
        ).map(sessionRowOf),
    );
  }
}

export class PostgresScanJudgements implements ScanJudgements {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async get(model: string, digest: string): Promise<StoredJudgement | undefined> {
    const [row] = await this.#db.query<{ verdict: string; reason: string }>(
      'SELECT verdict, reason FROM scan_judgements WHERE model = $1 AND digest = $2',
      [model, digest],
    );
    return storedJudgement(row);
  }

  async put(model: string, digest: string, judgement: StoredJudgement): Promise<void> {
    await this.#db.query(
      `INSERT INTO scan_judgements (model, digest, verdict, reason, at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (model, digest) DO UPDATE SET verdict = excluded.verdict, reason = excluded.reason, at = excluded.at`,
      [model, digest, judgement.verdict, judgement.reason, new Date().toISOString()],
    );
  }

  async count(model: string): Promise<number> {
    const [row] = await this.#db.query<{ n: string }>(
      'SELECT COUNT(*) AS n FROM scan_judgements WHERE model = $1',
      [model],
    );
    return Number(row?.n ?? 0);
  }
}

export class PostgresInputHistory implements InputHistory {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async list(project: string, limit = MAX_HISTORY_ENTRIES): Promise<string[]> {
    const rows = await this.#db.query<{ text: string }>(
      'SELECT text FROM input_history WHERE project = $1 ORDER BY id DESC LIMIT $2',
      [project, historyLimit(limit)],
    );
    return rows.map((r) => r.text).reverse();
  }

  async add(project: string, text: string, at = new Date()): Promise<void> {
    const entry = historyEntry(text);
    if (entry === undefined) return;
    await this.#db.transaction(async (query) => {
      const [last] = await query<{ text: string }>(
        'SELECT text FROM input_history WHERE project = $1 ORDER BY id DESC LIMIT 1',
        [project],
      );
      if (last?.text === entry) return;
      await query('INSERT INTO input_history (project, text, at) VALUES ($1, $2, $3)', [
        project,
        entry,
        at.toISOString(),
      ]);
      await query(
        `DELETE FROM input_history WHERE project = $1 AND id <= (
           SELECT id FROM input_history WHERE project = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`,
        [project, MAX_HISTORY_ENTRIES],
      );
    });
  }
}
