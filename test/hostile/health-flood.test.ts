import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../../src/servers/gateway/start.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { gatewayOnStore, type StoreGateway } from '../helpers/store-gateway.js';

/**
 * /readyz needs no token (balancers probe by address), so anyone who reaches the port can flood it. Each probe must
 * not cost a store round trip: with PostgreSQL those would queue in the connection pool in front of the audit rows
 * of real calls (which then wait, and are dropped past the audit wait).
 */
describe('hostile: a flood of /readyz probes', () => {
  let postgres: Postgres;
  let served: StoreGateway;
  let gateway: RunningGateway;
  let warnings: string[];

  beforeAll(async () => {
    postgres = await startPostgres('tack_probes');
    served = await gatewayOnStore(postgres.connectionString);
    ({ gateway, warnings } = served);
  }, 90_000);

  afterAll(async () => {
    await served?.close();
    await postgres?.stop();
  });

  it('2,000 probes at once cost a store round trip per second at most, and calls meanwhile are audited', async () => {
    const store = gateway.host.store!;
    let pings = 0;
    const ping = store.ping.bind(store);
    // Counted on the real store, which still answers each one.
    store.ping = () => {
      pings++;
      return ping();
    };
    const client = new Client({ name: 'probed', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    try {
      const readyz = gateway.url!.replace(/\/mcp$/, '/readyz');
      const started = Date.now();
      const probes = Array.from({ length: 2_000 }, () =>
        fetch(readyz).then(
          (r) => r.status,
          () => 0,
        ),
      );
      const calls = Array.from({ length: 10 }, (_, n) =>
        client.callTool({ name: 'fx__echo', arguments: { text: `probed-${n}` } }),
      );
      const statuses = await Promise.all(probes);
      const results = await Promise.all(calls);
      const seconds = (Date.now() - started) / 1000;
      expect(statuses.filter((s) => s === 200).length).toBeGreaterThan(0);
      expect(statuses.every((s) => s === 200 || s === 0)).toBe(true);
      expect(pings).toBeLessThanOrEqual(Math.ceil(seconds) + 2);
      expect(results.every((r) => !r.isError)).toBe(true);
      expect(warnings).not.toContain('AUDIT_FAILED');
      const rows = await store.audit.recent(50);
      expect(rows.filter((r) => r.client.startsWith('probed'))).toHaveLength(10);
    } finally {
      await client.close();
    }
  }, 60_000);
});
