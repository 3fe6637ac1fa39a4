import {
  PIN_SQL,
  type PinColumns,
  type PinRecord,
  type PinRecords,
  type PinWrite,
  pinParams,
  pinRecordOf,
  projectsByIdentity,
} from '../pins.js';
import type { PostgresDatabase } from './database.js';

/**
 * Pins shared by every instance. A `first` write pins only where nothing is approved yet (PIN_SQL.first), so when
 * two instances see a definition at once, one pins it and the other is told what was pinned: the guard then holds
 * its own version if it differs. An accepted pin is read by every instance at its next request (the gateway asks
 * the store whether what it holds was released).
 */
export class PostgresPinRecords implements PinRecords {
  readonly #db: PostgresDatabase;

  constructor(db: PostgresDatabase) {
    this.#db = db;
  }

  async list(identity?: string): Promise<PinRecord[]> {
    const rows =
      identity === undefined
        ? await this.#db.query<PinColumns>(
            'SELECT * FROM pins ORDER BY identity COLLATE "C", kind COLLATE "C", name COLLATE "C"',
          )
        : await this.#db.query<PinColumns>(
            'SELECT * FROM pins WHERE identity = $1 ORDER BY kind COLLATE "C", name COLLATE "C"',
            [identity],
          );
    return rows.map(pinRecordOf);
  }

  async noteProject(project: string, identities: readonly string[]): Promise<void> {
    if (identities.length === 0) return;
    const now = new Date().toISOString();
    await this.#db.transaction(async (query) => {
      for (const identity of identities) await query(PIN_SQL.noteProject, [identity, project, now]);
    });
  }

  async projects(): Promise<Map<string, string[]>> {
    const rows = await this.#db.query<{ identity: string; project: string }>(
      'SELECT identity, project FROM pin_projects ORDER BY identity COLLATE "C", project COLLATE "C"',
    );
    return projectsByIdentity(rows);
  }

  async get(identity: string, kind: string, name: string): Promise<PinRecord | undefined> {
    const [row] = await this.#db.query<PinColumns>(PIN_SQL.get, [identity, kind, name]);
    return row ? pinRecordOf(row) : undefined;
  }

  async write(writes: readonly PinWrite[]): Promise<Map<number, PinRecord>> {
    const standing = new Map<number, PinRecord>();
    if (writes.length === 0) return standing;
    const now = new Date().toISOString();
    await this.#db.transaction(async (query) => {
      for (const [i, write] of writes.entries()) {
        const rows = await query(PIN_SQL[write.op], pinParams(write, now));
        if (write.op !== 'first' || rows.length > 0) continue;
        const [row] = await query<PinColumns>(PIN_SQL.get, [write.identity, write.kind, write.name]);
        if (row) standing.set(i, pinRecordOf(row));
      }
    });
    return standing;
  }
}
