import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RELEASE_CHECK_MS } from '../../src/servers/gateway/core.js';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import {
  AUDIT_COMMIT_WAIT_MS,
  MAX_WAITING_ROWS,
  type PostgresAuditLog,
} from '../../src/store/postgres/audit.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { fixtureEntry, tempProject } from '../helpers/project.js';
import { gatewayOnStore, type StoreGateway } from '../helpers/store-gateway.js';
import { startTcpProxy, type TcpProxy } from '../helpers/tcp-proxy.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Audit rows whose client starts with `client` (or their distinct argument digests), counted in the database. */
async function auditRows(store: PostgresStore, client: string, distinct = false): Promise<number> {
  const [row] = await store.db.query<{ n: string }>(
    `SELECT COUNT(${distinct ? 'DISTINCT args_sha256' : '*'}) AS n FROM audit WHERE starts_with(client, $1)`,
    [client],
  );
  return Number(row?.n ?? 0);
}

/** Polls `probe` until it gives `want` or `ms` pass; the last answer. */
async function until<T>(probe: () => Promise<T>, want: T, ms: number): Promise<T> {
  const end = Date.now() + ms;
  let last = await probe();
  while (last !== want && Date.now() < end) {
    await sleep(100);
    last = await probe();
  }
  return last;
}

/**
 * The database of a team deployment goes away under load (the server killed, connections cut) and comes back: the
 * instance keeps answering calls, says it is not ready while the database is gone, and is ready and auditing again
 * once it is back, without restarting.
 */
describe('hostile: the PostgreSQL store goes away mid-load', () => {
  let postgres: Postgres;
  let served: StoreGateway;
  let gateway: RunningGateway;
  let warnings: string[];

  beforeAll(async () => {
    postgres = await startPostgres('tack_outage', { durableCommits: true });
    served = await gatewayOnStore(postgres.connectionString);
    ({ gateway, warnings } = served);
  }, 90_000);

  afterAll(async () => {
    await served?.close();
    await postgres?.stop();
  });

  const readyz = () => served.readyz();

  it('calls answer while the database is down, /readyz says 503, and both recover when it is back', async () => {
    const client = new Client({ name: 'outage', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    try {
      expect(await readyz()).toBe(200);
      let stop = false;
      const answered: Array<{ at: number; ok: boolean }> = [];
      const loop = async (_: unknown, loopNo: number) => {
        for (let n = 0; !stop; n++) {
          const result = await client.callTool({ name: 'fx__echo', arguments: { text: `c${loopNo}-${n}` } });
          answered.push({ at: Date.now(), ok: !result.isError });
        }
      };
      const loops = Array.from({ length: 4 }, loop);
      await sleep(300);

      const haltedAt = Date.now();
      await postgres.halt();
      expect(await until(readyz, 503, 5_000)).toBe(503);
      await sleep(1_000);
      const duringOutage = answered.filter((a) => a.at > haltedAt + 500);
      expect(duringOutage.length).toBeGreaterThan(0);
      expect(duringOutage.every((a) => a.ok)).toBe(true);
      // The rows go to the local spool: said once per 10 s with a count, not once per call (a log flood).
      expect(duringOutage.length).toBeGreaterThan(2);
      expect(warnings.filter((w) => w === 'AUDIT_SPOOLED').length).toBe(1);
      expect(warnings).not.toContain('AUDIT_FAILED');

      await postgres.resume();
      const resumedAt = Date.now();
      expect(await until(readyz, 200, 15_000)).toBe(200);
      await sleep(500);
      stop = true;
      await Promise.all(loops);
      const afterwards = answered.filter((a) => a.at > resumedAt);
      expect(afterwards.length).toBeGreaterThan(0);

      // Audited again, and nothing lost: every call answered, before, during and after the outage, has its row
      // once the spool is written (rows that were in flight when the server died went to the spool too).
      await client.callTool({ name: 'fx__echo', arguments: { text: 'after-the-outage' } });
      const store = gateway.host.store as PostgresStore;
      // Counted by distinct argument digest (each call's arguments are unique): a batch the server committed just
      // before it died, whose answer never came, is in the spool too and written twice (at least once, by design).
      const distinct = () => auditRows(store, 'outage', true);
      expect(await until(distinct, answered.length + 1, 15_000)).toBe(answered.length + 1);
      expect((await auditRows(store, 'outage')) - (answered.length + 1)).toBeLessThanOrEqual(500);
      expect(warnings).not.toContain('AUDIT_FAILED');
    } finally {
      await client.close();
    }
  }, 60_000);
});

/**
 * The database stops answering without refusing anything (a network partition, a hung server): every statement in
 * flight and every new connection waits. Calls must still be answered within a bound, the audit rows waiting for
 * the database must be bounded, and the instance must come back when the network does.
 */
describe('hostile: the PostgreSQL store stops answering mid-load', () => {
  let postgres: Postgres;
  let proxy: TcpProxy;
  let served: StoreGateway;
  let gateway: RunningGateway;
  let warnings: string[];

  beforeAll(async () => {
    postgres = await startPostgres('tack_partition');
    proxy = await startTcpProxy({ host: '127.0.0.1', port: postgres.port });
    served = await gatewayOnStore(postgres.connectionString.replace(`:${postgres.port}/`, `:${proxy.port}/`));
    ({ gateway, warnings } = served);
  }, 90_000);

  afterAll(async () => {
    proxy?.thaw();
    await served?.close();
    await proxy?.close();
    await postgres?.stop();
  });

  const readyz = () => served.readyz();

  it('calls are answered within the audit wait, waiting rows are bounded, and all recovers', async () => {
    const client = new Client(
      { name: 'partition', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    try {
      expect(await readyz()).toBe(200);
      proxy.freeze();
      const started = Date.now();
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, n) =>
          client.callTool({ name: 'fx__echo', arguments: { text: `p${n}` } }),
        ),
      );
      const took = Date.now() - started;
      expect(results.every((r) => !r.isError)).toBe(true);
      expect(took).toBeLessThan(AUDIT_COMMIT_WAIT_MS + 3_000);
      expect(warnings).toContain('AUDIT_FAILED');
      expect(await readyz()).toBe(503);

      // Rows keep arriving while the database is silent: past the bound they go to the spool at once.
      const store = gateway.host.store as PostgresStore;
      const audit = store.audit as PostgresAuditLog;
      const entry = {
        at: new Date().toISOString(),
        client: 'flood',
        server: 'fx',
        tool: 'echo',
        argsSha256: '0'.repeat(64),
        durationMs: 1,
        outcome: 'ok' as const,
      };
      const flood = Array.from({ length: MAX_WAITING_ROWS + 500 }, () =>
        audit.record(entry).then(
          () => 'written',
          (error: Error) => error.message,
        ),
      );
      // The queue stops at its bound; everything past it is spooled (on disk) and answered at once.
      expect(audit.waiting).toBe(MAX_WAITING_ROWS);
      const answeredAtOnce = await Promise.race([
        flood[flood.length - 1],
        new Promise((resolve) => setTimeout(() => resolve('still waiting'), 200)),
      ]);
      expect(answeredAtOnce).toBe('written');

      proxy.thaw();
      expect(await until(readyz, 200, 20_000)).toBe(200);
      const outcomes = await Promise.all(flood);
      expect(outcomes.every((o) => o === 'written')).toBe(true);
      // Every row of the flood reaches the database: the queue's, and the spool's once it is replayed.
      expect(await until(() => auditRows(store, 'flood'), flood.length, 30_000)).toBe(flood.length);
      const after = Date.now();
      await client.callTool({ name: 'fx__echo', arguments: { text: 'after-the-partition' } });
      const rows = await audit.recent(5);
      expect(rows.some((r) => r.client.startsWith('partition') && Date.parse(r.at) >= after - 1000)).toBe(
        true,
      );
      expect(audit.waiting).toBe(0);
    } finally {
      await client.close();
    }
  }, 90_000);
});

/**
 * Closing the store (the last step of a drain) while the database does not answer: the rows waiting would go out as
 * one timed-out batch of 500 after another (minutes for thousands). The close waits AUDIT_COMMIT_WAIT_MS for them,
 * then puts what is left in the local spool, and ends once the batch in flight gives up.
 */
describe('hostile: closing the PostgreSQL store while the database does not answer', () => {
  it('ends within the audit wait plus one statement timeout; the next store writes what it spooled', async () => {
    const postgres = await startPostgres('tack_close');
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: postgres.port });
    try {
      const url = postgres.connectionString.replace(`:${postgres.port}/`, `:${proxy.port}/`);
      const spoolDir = mkdtempSync(join(tmpdir(), 'tack-spool-'));
      const store = await PostgresStore.open(url, { queryTimeoutMs: 1_000, spoolDir });
      const entry = {
        at: new Date().toISOString(),
        client: 'closing',
        server: 'fx',
        tool: 'echo',
        argsSha256: '0'.repeat(64),
        durationMs: 1,
        outcome: 'ok' as const,
      };
      await store.audit.record(entry); // the pool holds a live connection, which the freeze then silences
      proxy.freeze();
      const rows = Array.from({ length: 3_000 }, (_, n) =>
        store.audit.record({ ...entry, argsSha256: (n + 1).toString(16).padStart(64, '0') }).then(
          () => 'written',
          () => 'failed',
        ),
      );
      const started = Date.now();
      await store.close();
      const took = Date.now() - started;
      const settled = await Promise.all(rows);
      // 5 s of audit wait, then the batch in flight: its statement timeout (1 s here) or a new connection's (10 s).
      expect(took).toBeLessThan(AUDIT_COMMIT_WAIT_MS + 10_000 + 3_000);
      // None is lost: what the database did not take is in the spool, and the next store on it writes them. (A row
      // whose INSERT was under way at its 5 s wait is told it was not committed; that INSERT then spools it.)
      expect(settled.filter((s) => s === 'written').length).toBeGreaterThan(rows.length / 2);
      proxy.thaw();
      const next = await PostgresStore.open(url, { spoolDir });
      try {
        await next.audit.replaySpool();
        // Every row once at least; twice only for the INSERT that was under way when the network froze: the client
        // gave up on it, and the healed network then delivered it (at least once, as docs/deploy.md says).
        expect(await auditRows(next, 'closing', true)).toBe(rows.length + 1);
        expect(await auditRows(next, 'closing')).toBeLessThanOrEqual(rows.length + 1 + 500);
      } finally {
        await next.close();
        rmSync(spoolDir, { recursive: true, force: true });
      }
    } finally {
      proxy.thaw();
      await proxy.close();
      await postgres.stop();
    }
  }, 90_000);
});

/**
 * While a definition is held, each request asks the store whether it was accepted meanwhile (on another instance,
 * or with `tack pins accept`). A database that does not answer must not hold every request for a statement timeout:
 * the check gives up quickly and the definition stays held.
 */
describe('hostile: a held definition while the database does not answer', () => {
  it('calls are answered within the release check bound plus the audit wait; the definition stays held', async () => {
    const postgres = await startPostgres('tack_held');
    const proxy = await startTcpProxy({ host: '127.0.0.1', port: postgres.port });
    using project = tempProject();
    project.write('tack.json', {
      mcpServers: {
        fx: fixtureEntry('stdio-server.js'),
        rug: fixtureEntry('attack-server.js', ['--role', 'rugpull']),
      },
    });
    project.env.TACK_STORE_URL = postgres.connectionString.replace(`:${postgres.port}/`, `:${proxy.port}/`);
    const gateway = await startGateway({ config: project.load(), http: { port: 0 } });
    const client = new Client({ name: 'held', version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    const text = (r: unknown) => ((r as { content: Array<{ text: string }> }).content[0]?.text ?? '').trim();
    try {
      await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
      expect(text(await client.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } }))).toBe('3');
      await expect
        .poll(async () => text(await client.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } })), {
          timeout: 15_000,
        })
        .toMatch(/changed since it was approved/);

      proxy.freeze();
      const started = Date.now();
      const echo = await client.callTool({ name: 'fx__echo', arguments: { text: 'while-held' } });
      const took = Date.now() - started;
      expect(echo.isError).toBeFalsy();
      expect(took).toBeLessThan(RELEASE_CHECK_MS + AUDIT_COMMIT_WAIT_MS + 3_000);
      expect(text(await client.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } }))).toMatch(
        /changed since it was approved/,
      );
    } finally {
      proxy.thaw();
      await client.close().catch(() => {});
      await gateway.close().catch(() => {});
      await proxy.close();
      await postgres.stop();
    }
  }, 120_000);
});
