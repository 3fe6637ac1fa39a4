import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TackError } from '../../src/errors.js';
import { DefinitionGuard } from '../../src/security/pins.js';
import { MAX_HISTORY_ENTRIES, MAX_HISTORY_ENTRY_CHARS } from '../../src/store/input-history.js';
import { openStore } from '../../src/store/open.js';
import { PostgresStore } from '../../src/store/postgres/store.js';
import type { SessionRow } from '../../src/store/sessions.js';
import { SqliteStore, type TackStore } from '../../src/store/store.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';

/**
 * The store's contract: the same calls give the same answers whatever the engine. Run against SQLite (a file in
 * a temp folder) and a real PostgreSQL server started for the suite (initdb + postgres on a free loopback port).
 */
interface Engine {
  name: string;
  /** A fresh, empty store. */
  open(): Promise<TackStore>;
}

let postgres: Postgres | undefined;
let databases = 0;
const temp = mkdtempSync(join(tmpdir(), 'tack-store-contract-'));
const opened: TackStore[] = [];

beforeAll(async () => {
  postgres = await startPostgres('tack_contract');
}, 60_000);

afterAll(async () => {
  for (const store of opened) await store.close().catch(() => {});
  await postgres?.stop();
  rmSync(temp, { recursive: true, force: true });
});

/** A new database on the suite's server, so each test starts empty. */
async function freshDatabase(): Promise<string> {
  const name = `contract_${++databases}`;
  const admin = new pg.Client({ connectionString: postgres!.connectionString });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${name}`);
  } finally {
    await admin.end();
  }
  return postgres!.connectionString.replace(/\/[^/]*$/, `/${name}`);
}

const engines: Engine[] = [
  {
    name: 'sqlite',
    async open() {
      const store = SqliteStore.open(join(temp, `s${++databases}.db`));
      opened.push(store);
      return store;
    },
  },
  {
    name: 'postgres',
    async open() {
      const store = await PostgresStore.open(await freshDatabase());
      opened.push(store);
      return store;
    },
  },
];

function session(id: string, startedAt: string, cwd = '/a'): SessionRow {
  return {
    id,
    startedAt,
    updatedAt: startedAt,
    cwd,
    model: 'm',
    status: 'running',
    file: `/s/${id}.jsonl`,
    steps: 1,
    inputTokens: 10,
    outputTokens: 5,
    costUsd: 0.25,
  };
}

describe.each(engines)('the store contract on $name', (engine) => {
  it('era verdicts: kept, retired past their horizon, deleted', async () => {
    const store = await engine.open();
    const t0 = 1_700_000_000_000;
    await store.eraCache.put('stdio:a', { prior: { kind: 'legacy' }, httpTransport: 'sse' }, t0);
    expect(await store.eraCache.get('stdio:a', t0 + 1)).toEqual({
      prior: { kind: 'legacy' },
      httpTransport: 'sse',
      storedAt: t0,
    });
    expect(await store.eraCache.get('stdio:a', t0 + 25 * 3600_000)).toBeUndefined();
    await store.eraCache.delete('stdio:a');
    expect(await store.eraCache.get('stdio:a', t0)).toBeUndefined();
  });

  it('audit: every row, newest first, details masked', async () => {
    const store = await engine.open();
    store.audit.addSecrets(['s3cret-value-123']);
    const entry = (i: number) => ({
      at: new Date(1_700_000_000_000 + i).toISOString(),
      client: 'c',
      server: 's',
      tool: `t${i}`,
      argsSha256: '0'.repeat(64),
      durationMs: 1.6,
      outcome: 'ok' as const,
      ...(i === 0 ? { detail: 'token s3cret-value-123 refused' } : {}),
    });
    await Promise.all(Array.from({ length: 30 }, (_, i) => store.audit.record(entry(i))));
    const recent = await store.audit.recent(100);
    expect(recent).toHaveLength(30);
    expect(new Set(recent.map((e) => e.tool)).size).toBe(30);
    const first = recent.find((e) => e.tool === 't0');
    expect(first).toMatchObject({ durationMs: 2, outcome: 'ok' });
    expect(first?.detail).not.toContain('s3cret-value-123');
    expect((await store.audit.recent(2)).length).toBe(2);
  });

  it('audit: filters by server, part of a tool or client name, and outcome; % and _ are literal', async () => {
    const store = await engine.open();
    const row = (tool: string, server: string, client: string, outcome: 'ok' | 'failed') => ({
      at: new Date(1_700_000_000_000).toISOString(),
      client,
      server,
      tool,
      argsSha256: '0'.repeat(64),
      durationMs: 1,
      outcome,
    });
    await store.audit.record(row('read_file', 'fs', 'claude (http, modern)', 'ok'));
    await store.audit.record(row('write_file', 'fs', 'cursor (stdio, legacy)', 'failed'));
    await store.audit.record(row('100%_done', 'web', 'claude (http, modern)', 'ok'));
    const tools = async (filter: Parameters<TackStore['audit']['query']>[0]) =>
      (await store.audit.query(filter)).map((e) => e.tool).sort();
    expect(await tools({ server: 'fs' })).toEqual(['read_file', 'write_file']);
    expect(await tools({ tool: '_file' })).toEqual(['read_file', 'write_file']);
    expect(await tools({ tool: '%_' })).toEqual(['100%_done']);
    expect(await tools({ outcome: 'failed' })).toEqual(['write_file']);
    expect(await tools({ client: 'claude', server: 'fs' })).toEqual(['read_file']);
    expect(await store.audit.query({}, 2)).toHaveLength(2);
  });

  it('scan judgements: one verdict per model and digest, replaced, counted per model', async () => {
    const store = await engine.open();
    expect(await store.scanJudgements.get('m1', 'd1')).toBeUndefined();
    await store.scanJudgements.put('m1', 'd1', { verdict: 'benign', reason: 'plain' });
    await store.scanJudgements.put('m1', 'd1', { verdict: 'poisoned', reason: 'claims to be best' });
    await store.scanJudgements.put('m1', 'd2', { verdict: 'benign', reason: 'fine' });
    await store.scanJudgements.put('m2', 'd1', { verdict: 'benign', reason: 'other model' });
    expect(await store.scanJudgements.get('m1', 'd1')).toEqual({
      verdict: 'poisoned',
      reason: 'claims to be best',
    });
    expect(await store.scanJudgements.get('m2', 'd1')).toEqual({ verdict: 'benign', reason: 'other model' });
    expect(await store.scanJudgements.count('m1')).toBe(2);
    expect(await store.scanJudgements.count('m3')).toBe(0);
  });

  it('input history: per project, a repeat kept once, blank ignored, cut and bounded', async () => {
    const store = await engine.open();
    await store.inputHistory.add('/a', 'one');
    await store.inputHistory.add('/a', 'one');
    await store.inputHistory.add('/b', 'elsewhere');
    await store.inputHistory.add('/a', 'two');
    await store.inputHistory.add('/a', '   ');
    expect(await store.inputHistory.list('/a')).toEqual(['one', 'two']);
    expect(await store.inputHistory.list('/a', 1)).toEqual(['two']);
    expect(await store.inputHistory.list('/b')).toEqual(['elsewhere']);
    await store.inputHistory.add('/a', 'y'.repeat(MAX_HISTORY_ENTRY_CHARS + 5));
    expect((await store.inputHistory.list('/a')).at(-1)).toHaveLength(MAX_HISTORY_ENTRY_CHARS);
    for (let i = 0; i < MAX_HISTORY_ENTRIES + 3; i++) await store.inputHistory.add('/c', `m${i}`);
    const kept = await store.inputHistory.list('/c');
    expect(kept).toHaveLength(MAX_HISTORY_ENTRIES);
    expect(kept[0]).toBe('m3');
    expect(kept.at(-1)).toBe(`m${MAX_HISTORY_ENTRIES + 2}`);
  });

  it('sessions: upsert, list newest first, find by prefix, ambiguity named', async () => {
    const store = await engine.open();
    await store.sessions.upsert(session('20261130-0215-aaaa1111', '2026-11-30T02:15:00.000Z'));
    await store.sessions.upsert(session('20261130-0215-aaaa2222', '2026-11-30T02:15:30.000Z', '/b'));
    await store.sessions.upsert({
      ...session('20261130-0300-bbbb3333', '2026-11-30T03:00:00.000Z'),
      title: 'updated',
    });
    expect((await store.sessions.list()).map((s) => s.id)).toEqual([
      '20261130-0300-bbbb3333',
      '20261130-0215-aaaa2222',
      '20261130-0215-aaaa1111',
    ]);
    expect((await store.sessions.list({ cwd: '/b' })).map((s) => s.id)).toEqual(['20261130-0215-aaaa2222']);
    expect(await store.sessions.get('20261130-0300-bbbb3333')).toMatchObject({
      title: 'updated',
      steps: 1,
      inputTokens: 10,
      costUsd: 0.25,
    });
    expect((await store.sessions.findByPrefix('bbbb'))?.id).toBe('20261130-0300-bbbb3333');
    expect(await store.sessions.findByPrefix('%')).toBeUndefined();
    await expect(store.sessions.findByPrefix('aaaa')).rejects.toThrow(/is ambiguous: 2 sessions match/);
  });

  it('tool examples: newest 50 per tool, import keeps times, grouped newest first', async () => {
    const store = await engine.open();
    for (let i = 0; i < 55; i++)
      await store.toolExamples.record(
        'w',
        'f',
        `query ${i}`,
        new Date(1_700_000_000_000 + i * 1000).toISOString(),
      );
    const grouped = await store.toolExamples.all();
    expect(grouped.get('w')?.get('f')).toHaveLength(50);
    expect(grouped.get('w')?.get('f')?.[0]).toBe('query 54');
    expect(
      await store.toolExamples.import([
        { server: 'x', tool: 'y', query: '  rain?  ', at: '2020-01-01T00:00:00.000Z' },
      ]),
    ).toBe(1);
    expect((await store.toolExamples.rows())[0]).toEqual({
      server: 'x',
      tool: 'y',
      query: 'rain?',
      at: '2020-01-01T00:00:00.000Z',
    });
  });

  it('pins: first use pins once, hold keeps the pin, approve clears the hold', async () => {
    const store = await engine.open();
    const key = { identity: 'srv node a.js', kind: 'tool', name: 'add' };
    expect(await store.pins.write([{ ...key, op: 'first', sha256: 'aaa', definition: 'A' }])).toEqual(
      new Map(),
    );
    // A second first sight (another process) pins nothing and learns what stands.
    const standing = await store.pins.write([{ ...key, op: 'first', sha256: 'bbb', definition: 'B' }]);
    expect(standing.get(0)).toMatchObject({ sha256: 'aaa', definition: 'A' });
    await store.pins.write([{ ...key, op: 'hold', sha256: 'ccc', definition: 'C', reason: 'changed' }]);
    expect(await store.pins.get(key.identity, 'tool', 'add')).toMatchObject({
      sha256: 'aaa',
      pending: { sha256: 'ccc', definition: 'C', reason: 'changed' },
    });
    await store.pins.write([{ ...key, op: 'approve', sha256: 'ccc', definition: 'C' }]);
    const record = await store.pins.get(key.identity, 'tool', 'add');
    expect(record).toMatchObject({ sha256: 'ccc' });
    expect(record?.pending).toBeUndefined();
    await store.pins.write([
      { identity: 'srv node a.js', kind: 'prompt', name: 'B', op: 'first', sha256: 'd', definition: 'D' },
    ]);
    expect((await store.pins.list('srv node a.js')).map((r) => `${r.kind} ${r.name}`)).toEqual([
      'prompt B',
      'tool add',
    ]);
  });

  it('pins: the projects an identity was seen in, each noted once, sorted', async () => {
    const store = await engine.open();
    expect(await store.pins.projects()).toEqual(new Map());
    await store.pins.noteProject('/p/shop', ['fs stdio:a', 'git stdio:b']);
    await store.pins.noteProject('/p/blog', ['fs stdio:a']);
    await store.pins.noteProject('/p/shop', ['fs stdio:a']);
    await store.pins.noteProject('/p/blog', []);
    expect(await store.pins.projects()).toEqual(
      new Map([
        ['fs stdio:a', ['/p/blog', '/p/shop']],
        ['git stdio:b', ['/p/shop']],
      ]),
    );
  });

  it('trusted projects, OAuth credentials, embeddings and token counts round-trip', async () => {
    const store = await engine.open();
    await store.trustedProjects.set('/p', { 'tack.json': 'abc' }, '2026-01-01T00:00:00.000Z');
    expect(await store.trustedProjects.get('/p')).toEqual({
      root: '/p',
      files: { 'tack.json': 'abc' },
      trustedAt: '2026-01-01T00:00:00.000Z',
    });
    expect((await store.trustedProjects.list()).map((p) => p.root)).toEqual(['/p']);
    expect(await store.trustedProjects.delete('/p')).toBe(true);
    expect(await store.trustedProjects.delete('/p')).toBe(false);

    await store.oauth.putClient('https://as', 'https://mcp', {
      client_id: 'c1',
      redirect_uris: ['http://127.0.0.1/cb'],
    });
    expect((await store.oauth.getClient('https://as', 'https://mcp'))?.client.client_id).toBe('c1');
    await store.oauth.putTokens({
      issuer: 'https://as',
      resource: 'https://mcp',
      server: 'docs',
      tokens: { access_token: 'at', token_type: 'Bearer' },
      expiresAt: 1_800_000_000_000,
    });
    expect(await store.oauth.getTokens('https://mcp')).toMatchObject({
      server: 'docs',
      tokens: { access_token: 'at' },
      expiresAt: 1_800_000_000_000,
    });
    expect(await store.oauth.listTokens()).toHaveLength(1);
    expect(await store.oauth.deleteTokens('https://mcp')).toBe(1);
    expect(await store.oauth.deleteClients('https://mcp')).toBe(1);

    const vector = new Float32Array([0.5, -1.25, 3]);
    await store.toolEmbeddings.put('m', [{ digest: 'd1', vector }]);
    expect([...((await store.toolEmbeddings.get('m', ['d1', 'd2'])).get('d1') ?? [])]).toEqual([
      0.5, -1.25, 3,
    ]);
    expect(await store.toolEmbeddings.count('m')).toBe(1);

    await store.tokenCounts.put(
      'qwen3',
      new Map([
        ['x', 7],
        ['y', 9],
      ]),
    );
    expect(await store.tokenCounts.get('qwen3', ['x', 'y', 'z'])).toEqual(
      new Map([
        ['x', 7],
        ['y', 9],
      ]),
    );
    await store.ping();
  });
});

describe('the PostgreSQL store shared by several instances', () => {
  it('migrates once under the advisory lock when instances start together', async () => {
    const url = await freshDatabase();
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.open(url)));
    opened.push(...stores);
    const rows = await stores[0]!.db.query<{ version: number }>('SELECT version FROM tack_schema');
    expect(rows.map((r) => Number(r.version))).toEqual([1, 2, 3]);
  });

  it('refuses a database migrated by a newer tack, naming the server without its password', async () => {
    const url = await freshDatabase();
    const store = await PostgresStore.open(url);
    await store.db.query("INSERT INTO tack_schema (version, name) VALUES (99, 'future')");
    await store.close();
    const withPassword = url.replace('tack@', 'tack:hunter2@');
    const error = await PostgresStore.open(withPassword).catch((e: unknown) => e);
    expect(TackError.isInstance(error) && error.code).toBe('STORE_FAILED');
    expect((error as Error).message).toMatch(/schema version 99, newer than this tack understands \(3\)/);
    expect((error as Error).message).not.toContain('hunter2');
  });

  it('a store that cannot be reached fails by name instead of going on without state', async () => {
    const error = await openStore({
      paths: { storeFile: join(temp, 'unused.db') },
      store: { url: 'postgresql://tack:pw@127.0.0.1:1/nothing' },
    }).catch((e: unknown) => e);
    expect(TackError.isInstance(error) && error.code).toBe('STORE_FAILED');
    expect((error as Error).message).toMatch(
      /^postgresql:\/\/tack:\*\*\*@127\.0\.0\.1:1\/nothing: cannot open/,
    );
  });

  it('of two instances seeing a definition first, one pins it; a pin accepted on one is seen by the other', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    opened.push(a, b);
    const identity = 'notes node notes.js';
    const tool = (description: string) => ({
      name: 'search',
      description,
      inputSchema: { type: 'object', properties: {} },
    });
    const guardA = new DefinitionGuard(a.pins);
    const guardB = new DefinitionGuard(b.pins);
    // Both review at once, each with its own version: exactly one pins, the other is held against that pin.
    const [ra, rb] = await Promise.all([
      guardA.review({ server: 'notes', identity, tools: [tool('Search notes.')] }),
      guardB.review({ server: 'notes', identity, tools: [tool('Search the notes.')] }),
    ]);
    expect(ra.pinned + rb.pinned).toBe(1);
    const held = [...ra.held, ...rb.held];
    expect(held).toHaveLength(1);
    expect(held[0]).toMatchObject({ why: 'changed' });
    // The one held is accepted through the other instance's store; its guard sees it at the next check.
    const heldBy = ra.held.length > 0 ? guardA : guardB;
    const other = heldBy === guardA ? guardB : guardA;
    await other.accept(held[0]!);
    expect(await heldBy.released(held)).toBe(true);
  });
});
