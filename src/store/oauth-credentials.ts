import { chmodSync } from 'node:fs';
import type { StoredOAuthClientInformation, StoredOAuthTokens } from '@modelcontextprotocol/client';
import type { Db } from './database.js';

/** One server's tokens from one authorization server, as `tack auth --list` shows them (secrets included). */
export interface OAuthTokenRecord {
  /** The authorization server's `issuer`, as the SDK resolved it from its metadata. */
  issuer: string;
  /** The protected MCP endpoint (origin and path): tokens are minted for one resource (RFC 8707). */
  resource: string;
  /** The configured name of the server that last saved them (for display; the key is the resource). */
  server: string;
  tokens: StoredOAuthTokens;
  /** When the access token expires (ms since the epoch), from `expires_in` at save time; absent when unsaid. */
  expiresAt: number | undefined;
  updatedAt: number;
}

export interface OAuthClientRecord {
  issuer: string;
  resource: string;
  client: StoredOAuthClientInformation;
  registeredAt: number;
}

export interface TokenRow {
  issuer: string;
  resource: string;
  server: string;
  tokens: string;
  /** A number from SQLite; PostgreSQL's driver gives BIGINT as a string. */
  expires_at: number | string | null;
  updated_at: number | string;
}

/**
 * OAuth client registrations and tokens for remote MCP servers, keyed by the authorization server's issuer
 * (client ids and tokens are only meaningful to the server that issued them, RFC 6749 §2.2) and by the protected
 * resource. Registrations are per resource too: a registration re-made for one server (a new loopback port)
 * must not orphan the refresh tokens another server holds under the old client id.
 */
export interface OAuthCredentials {
  getClient(issuer: string, resource: string): Promise<OAuthClientRecord | undefined>;
  putClient(issuer: string, resource: string, client: StoredOAuthClientInformation): Promise<void>;
  deleteClients(resource: string, issuer?: string): Promise<number>;
  /** The resource's tokens from `issuer`; without one, the set saved last (the per-request read has no issuer). */
  getTokens(resource: string, issuer?: string): Promise<OAuthTokenRecord | undefined>;
  putTokens(record: Omit<OAuthTokenRecord, 'updatedAt'>): Promise<void>;
  /** Forgets the resource's tokens (from every issuer, or one); returns how many sets were removed. */
  deleteTokens(resource: string, issuer?: string): Promise<number>;
  /** Every stored token set, newest first. */
  listTokens(): Promise<OAuthTokenRecord[]>;
}

export class SqliteOAuthCredentials implements OAuthCredentials {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  async getClient(issuer: string, resource: string): Promise<OAuthClientRecord | undefined> {
    const row = this.#db
      .prepare<[string, string], { client: string; registered_at: number }>(
        'SELECT client, registered_at FROM oauth_clients WHERE issuer = ? AND resource = ?',
      )
      .get(issuer, resource);
    if (!row) return undefined;
    const client = parseStored<StoredOAuthClientInformation>(row.client);
    return client && { issuer, resource, client, registeredAt: row.registered_at };
  }

  async putClient(issuer: string, resource: string, client: StoredOAuthClientInformation): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO oauth_clients (issuer, resource, client, registered_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (issuer, resource) DO UPDATE SET client = excluded.client, registered_at = excluded.registered_at`,
      )
      .run(issuer, resource, JSON.stringify(client), Date.now());
    this.#protect();
  }

  async deleteClients(resource: string, issuer?: string): Promise<number> {
    return issuer === undefined
      ? this.#db.prepare('DELETE FROM oauth_clients WHERE resource = ?').run(resource).changes
      : this.#db.prepare('DELETE FROM oauth_clients WHERE resource = ? AND issuer = ?').run(resource, issuer)
          .changes;
  }

  async getTokens(resource: string, issuer?: string): Promise<OAuthTokenRecord | undefined> {
    const row =
      issuer === undefined
        ? this.#db
            .prepare<[string], TokenRow>(
              'SELECT * FROM oauth_tokens WHERE resource = ? ORDER BY updated_at DESC, rowid DESC LIMIT 1',
            )
            .get(resource)
        : this.#db
            .prepare<[string, string], TokenRow>(
              'SELECT * FROM oauth_tokens WHERE resource = ? AND issuer = ?',
            )
            .get(resource, issuer);
    return row && oauthTokenRecord(row);
  }

  async putTokens(record: Omit<OAuthTokenRecord, 'updatedAt'>): Promise<void> {
    this.#db
      .prepare(
        `INSERT INTO oauth_tokens (issuer, resource, server, tokens, expires_at, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (issuer, resource) DO UPDATE SET server = excluded.server, tokens = excluded.tokens,
           expires_at = excluded.expires_at, updated_at = excluded.updated_at`,
      )
      .run(
        record.issuer,
        record.resource,
        record.server,
        JSON.stringify(record.tokens),
        record.expiresAt ?? null,
        Date.now(),
      );
    this.#protect();
  }

  async deleteTokens(resource: string, issuer?: string): Promise<number> {
    return issuer === undefined
      ? this.#db.prepare('DELETE FROM oauth_tokens WHERE resource = ?').run(resource).changes
      : this.#db.prepare('DELETE FROM oauth_tokens WHERE resource = ? AND issuer = ?').run(resource, issuer)
          .changes;
  }

  async listTokens(): Promise<OAuthTokenRecord[]> {
    return this.#db
      .prepare<[], TokenRow>('SELECT * FROM oauth_tokens ORDER BY updated_at DESC')
      .all()
      .flatMap((row) => oauthTokenRecord(row) ?? []);
  }

  /**
   * Refresh tokens are long-lived bearer credentials: keep the database (and its WAL, where fresh rows sit until a
   * checkpoint) readable by the user alone. Best effort: a file system without modes keeps working.
   */
  #protect(): void {
    const file = this.#db.name;
    if (!file || file === ':memory:') return;
    for (const path of [file, `${file}-wal`, `${file}-shm`]) {
      try {
        chmodSync(path, 0o600);
      } catch {
        // absent (no WAL yet) or not ours to change
      }
    }
  }
}

export function oauthTokenRecord(row: TokenRow): OAuthTokenRecord | undefined {
  const tokens = parseStored<StoredOAuthTokens>(row.tokens);
  if (!tokens) return undefined;
  return {
    issuer: row.issuer,
    resource: row.resource,
    server: row.server,
    tokens,
    expiresAt: row.expires_at === null ? undefined : Number(row.expires_at),
    updatedAt: Number(row.updated_at),
  };
}

/** A row written by a tack that stored another shape reads as absent: the SDK then logs in afresh. */
export function parseStored<T>(text: string): T | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
