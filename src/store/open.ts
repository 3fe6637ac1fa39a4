import { dirname, join } from 'node:path';
import { errorMessage } from '../errors.js';
import { sendWarning, type WarningSink } from '../util/warnings.js';
import { SqliteStore, type TackStore } from './store.js';

/** Where the store lives: the SQLite file of the state directory, or the PostgreSQL server `store.url` names. */
export interface StoreLocation {
  paths: { storeFile: string };
  /** tack.json `store` (TACK_STORE_URL wins over it): `url` is a `postgres://` or `postgresql://` URL. */
  store?: { url?: string | undefined; poolSize?: number | undefined } | undefined;
}

/** Whether `url` names a PostgreSQL server (the only engine a URL can name). */
export function isPostgresUrl(url: string): boolean {
  return /^postgres(ql)?:\/\//i.test(url);
}

/**
 * The store, opened once by whoever composes tack (the CLI, startAgent, startGateway) and handed to the parts that
 * use it; they never open one themselves. A SQLite store that cannot be opened is a warning, not a failure: tack
 * works without it, probing every server's era at every start and keeping no pins, trust, audit or sessions. A
 * PostgreSQL store was asked for by name: one that cannot be reached or migrated throws (STORE_FAILED), since the
 * instances sharing it must not go on with state of their own.
 */
export async function openStore(
  location: StoreLocation,
  onWarning?: WarningSink,
): Promise<TackStore | undefined> {
  const url = location.store?.url;
  if (url) return openConfiguredStore(location, onWarning);
  try {
    return SqliteStore.open(location.paths.storeFile);
  } catch (error) {
    sendWarning(onWarning, { code: 'STORE_DISABLED', message: `store disabled: ${errorMessage(error)}` });
    return undefined;
  }
}

/** The store, or the error that it cannot be opened (for commands that are about the store: pins, audit, trust). */
export async function openConfiguredStore(
  location: StoreLocation,
  onWarning?: WarningSink,
): Promise<TackStore> {
  const url = location.store?.url;
  if (!url) return SqliteStore.open(location.paths.storeFile);
  // Imported here: the driver and the PostgreSQL code cost start-up time that SQLite users never need to pay.
  const { PostgresStore } = await import('./postgres/store.js');
  // Audit rows the database cannot take wait next to the SQLite file, in the state folder (docs/deploy.md).
  return PostgresStore.open(url, {
    poolSize: location.store?.poolSize,
    spoolDir: join(dirname(location.paths.storeFile), 'audit-spool'),
    onWarning,
  });
}
