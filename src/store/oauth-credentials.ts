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

interface TokenRow {
  issuer: string;
  resource: string;
  server: string;
  tokens: string;
  expires_at: number | null;
  updated_at: number;
}

/**
 * OAuth client registrations and tokens for remote MCP servers, keyed by the authorization server's issuer
 * (client ids and tokens are only meaningful to the server that issued them, RFC 6749 §2.2) and by the protected
 * resource. Registrations are per resource too: a registration re-made for one server (a new loopback port)
 * must not orphan the refresh tokens another server holds under the old client id.
 */
export class OAuthCredentials {
  readonly #db: Db;

  constructor(db: Db) {
    this.#db = db;
  }

  getClient(issuer: string, resource: string): OAuthClientRecord | undefined {
    const row = this.#db
      .prepare<[string, string], { client: string; registered_at: number }>(
        'SELECT client, registered_at FROM oauth_clients WHERE issuer = ? AND resource = ?',
      )
      .get(issuer, resource);
    if (!row) return undefined;
    const client = parse<StoredOAuthClientInformation>(row.client);
    return client && { issuer, resource, client, registeredAt: row.registered_at };
  }

  putClient(issuer: string, resource: string, client: StoredOAuthClientInformation): void {
    this.#db
      .prepare(
        `INSERT INTO oauth_clients (issuer, resource, client, registered_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (issuer, resource) DO UPDATE SET client = excluded.client, registered_at = excluded.registered_at`,
      )
      .run(issuer, resource, JSON.stringify(client), Date.now());
    this.#protect();
  }

  deleteClients(resource: string, issuer?: string): number {
    return issuer === undefined
      ? this.#db.prepare('DELETE FROM oauth_clients WHERE resource = ?').run(resource).changes
      : this.#db.prepare('DELETE FROM oauth_clients WHERE resource = ? AND issuer = ?').run(resource, issuer)
          .changes;
  }

  /** The resource's tokens from `issuer`; without one, the set saved last (the per-request read has no issuer). */
  getTokens(resource: string, issuer?: string): OAuthTokenRecord | undefined {
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
    return row && toRecord(row);
  }

  putTokens(record: Omit<OAuthTokenRecord, 'updatedAt'>): void {
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

  /** Forgets the resource's tokens (from every issuer, or one); returns how many sets were removed. */
  deleteTokens(resource: string, issuer?: string): number {
    return issuer === undefined
      ? this.#db.prepare('DELETE FROM oauth_tokens WHERE resource = ?').run(resource).changes
      : this.#db.prepare('DELETE FROM oauth_tokens WHERE resource = ? AND issuer = ?').run(resource, issuer)
          .changes;
  }

  /** Every stored token set, newest first. */
  listTokens(): OAuthTokenRecord[] {
    return this.#db
      .prepare<[], TokenRow>('SELECT * FROM oauth_tokens ORDER BY updated_at DESC')
      .all()
      .flatMap((row) => toRecord(row) ?? []);
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

function toRecord(row: TokenRow): OAuthTokenRecord | undefined {
  const tokens = parse<StoredOAuthTokens>(row.tokens);
  if (!tokens) return undefined;
  return {
    issuer: row.issuer,
    resource: row.resource,
    server: row.server,
    tokens,
    expiresAt: row.expires_at ?? undefined,
    updatedAt: row.updated_at,
  };
}

/** A row written by a tack that stored another shape reads as absent: the SDK then logs in afresh. */
function parse<T>(text: string): T | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null ? (value as T) : undefined;
  } catch {
    return undefined;
  }
}
