import { openConfiguredStore } from '../../store/open.js';
import { printListing, table } from '../output.js';
import { cliStoreLocation, type GlobalOptions } from '../with-host.js';

export interface AuditOptions extends GlobalOptions {
  limit?: string;
}

/** `tack audit [--limit N]`: the newest calls the gateway served, from the store. */
export async function auditCommand(options: AuditOptions): Promise<number> {
  const limit = Math.max(1, Number(options.limit ?? 20) || 20);
  // The configured store: with `store.url`, the log every instance behind the load balancer writes.
  const store = await openConfiguredStore(cliStoreLocation(options));
  try {
    // Rows an instance on this state folder left in the local spool (a PostgreSQL store that was down) are the newest
    // calls it answered: written first, or the listing would miss them (docs/deploy.md, Audit).
    await store.audit.flush();
    const entries = await store.audit.recent(limit);
    return printListing(
      options,
      entries,
      'No calls recorded yet (the audit log is written by `tack serve`).',
      () =>
        table(
          ['TIME', 'CLIENT', 'SERVER', 'TOOL', 'OUTCOME', 'MS', 'ARGS SHA-256'],
          entries.map((e) => [
            e.at,
            e.client,
            e.server,
            e.tool,
            e.detail ? `${e.outcome}: ${e.detail.slice(0, 60)}` : e.outcome,
            String(e.durationMs),
            e.argsSha256.slice(0, 12),
          ]),
        ),
    );
  } finally {
    await store.close();
  }
}
