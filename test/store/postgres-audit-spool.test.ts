import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AuditEntry, AuditRow } from '../../src/store/audit.js';
import { PostgresAuditLog, SPOOL_RETRY_MS } from '../../src/store/postgres/audit.js';
import { AuditSpool } from '../../src/store/postgres/audit-spool.js';
import { PostgresDatabase, redactedUrl } from '../../src/store/postgres/database.js';
import { migratePostgres } from '../../src/store/postgres/migrations.js';
import { spoolFolder } from '../../src/store/postgres/store.js';
import type { TackWarning } from '../../src/util/warnings.js';
import { tack } from '../helpers/cli.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { deadPid, freePort } from '../helpers/processes.js';
import { tempProject } from '../helpers/project.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const entry = (client: string, n: number): AuditEntry => ({
  at: new Date().toISOString(),
  client,
  server: 'fx',
  tool: 'echo',
  argsSha256: n.toString(16).padStart(64, '0'),
  durationMs: 1,
  outcome: 'ok',
});

const row = (client: string, n: number): AuditRow => [
  new Date(1_700_000_000_000 + n).toISOString(),
  client,
  'fx',
  'echo',
  n.toString(16).padStart(64, '0'),
  1,
  'ok',
  null,
];

describe('the PostgreSQL audit log with a spool, on a database that refuses', () => {
  it('says AUDIT_SPOOLED at most once per 10 s through an outage, retries included', async () => {
    using project = tempProject();
    const db = new PostgresDatabase(`postgresql://tack@127.0.0.1:${await freePort()}/nothing`);
    const warnings: TackWarning[] = [];
    const spool = new AuditSpool(join(project.dir, 'spool'));
    const audit = new PostgresAuditLog(db, { spool, onWarning: (w) => warnings.push(w) });
    try {
      await audit.record(entry('refused', 1)); // refused at once: spooled, and said
      expect(warnings.map((w) => w.code)).toEqual(['AUDIT_SPOOLED']);
      // A retry fails every SPOOL_RETRY_MS (5 s); docs/deploy.md promises one warning per 10 s, with a count.
      await sleep(SPOOL_RETRY_MS * 1.5);
      expect(warnings.filter((w) => w.code === 'AUDIT_SPOOLED')).toHaveLength(1);
    } finally {
      await audit.close();
      await db.close();
    }
  }, 20_000);
});

describe('the PostgreSQL audit log with a spool, on a real server', () => {
  let postgres: Postgres;
  beforeAll(async () => {
    postgres = await startPostgres('tack_spool');
  }, 90_000);
  afterAll(async () => {
    await postgres?.stop();
  });

  it("`tack audit` writes a dead instance's spool before it lists the log (docs/deploy.md, Audit)", async () => {
    using project = tempProject();
    project.env.TACK_STORE_URL = postgres.connectionString;
    const stateDir = dirname(project.load().paths.storeFile);
    const dir = join(stateDir, 'audit-spool', spoolFolder(redactedUrl(postgres.connectionString)));
    mkdirSync(dir, { recursive: true });
    // An instance on this state folder died with 1,200 rows spooled (three batches), the newest calls it answered.
    writeFileSync(
      join(dir, `${deadPid()}-aaaaaaaaaaaa-0.jsonl`),
      Array.from({ length: 1_200 }, (_, n) => `${JSON.stringify(row('dead-instance', n))}\n`).join(''),
    );
    const run = await tack(['audit', '--json', '--limit', '2000'], { cwd: project.dir, env: project.env });
    expect(run.code).toBe(0);
    const listed = (JSON.parse(run.stdout) as AuditEntry[]).filter((e) => e.client === 'dead-instance');
    expect(listed).toHaveLength(1_200);
    expect(readdirSync(dir)).toEqual([]);
  }, 60_000);

  // A client names itself (MCP initialize) and an upstream words its errors: neither is trusted. PostgreSQL's text
  // refuses U+0000; one such row must not fail the 499 others of its batch, nor stop the spool forever.
  it('a row with a NUL character neither fails its batch nor blocks the spool', async () => {
    using project = tempProject();
    const db = new PostgresDatabase(postgres.connectionString);
    await migratePostgres(db);
    const spool = new AuditSpool(join(project.dir, 'spool'));
    const audit = new PostgresAuditLog(db, { spool });
    const count = async () =>
      Number(
        (await db.query<{ n: string }>("SELECT COUNT(*) AS n FROM audit WHERE starts_with(client, 'nul')"))[0]
          ?.n,
      );
    try {
      await Promise.all([
        audit.record(entry('nul-1', 1)),
        audit.record({ ...entry('nul-evil\u0000x', 2), detail: 'upstream said \u0000' }),
        audit.record(entry('nul-2', 3)),
      ]);
      const end = Date.now() + SPOOL_RETRY_MS * 3;
      while (Date.now() < end && (await count()) < 3) await sleep(200);
      expect(await count()).toBe(3);
      expect(spool.pending()).toBe(false);
    } finally {
      await audit.close();
      await db.close();
    }
  }, 60_000);

  it('a spool line the database can never take (an edited file) is skipped, not retried forever', async () => {
    using project = tempProject();
    const db = new PostgresDatabase(postgres.connectionString);
    await migratePostgres(db);
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    const bad: unknown[] = [...row('poison', 1)];
    bad[5] = 1.5; // duration_ms is an INTEGER
    const huge: unknown[] = [...row('poison', 2)];
    huge[5] = 2 ** 40;
    writeFileSync(
      join(dir, `${deadPid()}-aaaaaaaaaaaa-0.jsonl`),
      `${JSON.stringify(bad)}\n${JSON.stringify(huge)}\n${JSON.stringify(row('poison', 3))}\n`,
    );
    const spool = new AuditSpool(dir);
    const audit = new PostgresAuditLog(db, { spool });
    try {
      await audit.replaySpool();
      const [n] = await db.query<{ n: string }>("SELECT COUNT(*) AS n FROM audit WHERE client = 'poison'");
      expect(Number(n?.n)).toBe(1);
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      await audit.close();
      await db.close();
    }
  }, 60_000);

  it('writes rows spooled while a replay was under way, with no further call to wake it', async () => {
    using project = tempProject();
    const db = new PostgresDatabase(postgres.connectionString);
    await migratePostgres(db);
    const count = async (client: string) =>
      Number(
        (await db.query<{ n: string }>('SELECT COUNT(*) AS n FROM audit WHERE client = $1', [client]))[0]?.n,
      );
    // Another session holds the audit table: every INSERT waits, as on a database that answers slowly.
    const locker = new pg.Client({ connectionString: postgres.connectionString });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE audit IN ACCESS EXCLUSIVE MODE');
    const dir = join(project.dir, 'spool');
    mkdirSync(dir);
    // A dead instance's 5,000 rows: their replay starts at once and waits on the lock (then takes 10 batches).
    writeFileSync(
      join(dir, `${deadPid()}-aaaaaaaaaaaa-0.jsonl`),
      Array.from({ length: 5_000 }, (_, n) => `${JSON.stringify(row('orphan', n))}\n`).join(''),
    );
    const spool = new AuditSpool(dir);
    const audit = new PostgresAuditLog(db, { spool });
    try {
      // The first row's INSERT waits on the lock; the second waits behind it, and is spooled after 5 s. Its retry
      // comes 5 s later, while the replay still waits.
      const first = audit.record(entry('late', 1)).catch(() => 'not committed in time');
      const second = audit.record(entry('late', 2));
      await second;
      await sleep(SPOOL_RETRY_MS + 1_000);
      await locker.query('COMMIT');
      const end = Date.now() + 30_000;
      while (Date.now() < end && (await count('orphan')) < 5_000) await sleep(100);
      expect(await count('orphan')).toBe(5_000);
      await first;
      // Nothing else happens on this instance: the spooled row must go in by itself.
      const deadline = Date.now() + SPOOL_RETRY_MS * 3;
      while (Date.now() < deadline && (await count('late')) < 2) await sleep(200);
      expect(await count('late')).toBe(2);
    } finally {
      await locker.end().catch(() => {});
      await audit.close();
      spool.close();
      await db.close();
    }
  }, 90_000);
});
