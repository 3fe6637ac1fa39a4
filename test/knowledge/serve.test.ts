import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, InMemoryTransport, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { loadBundle } from '../../src/knowledge/bundle.js';
import { KnowledgeBase } from '../../src/knowledge/knowledge.js';
import { knowledgeTools } from '../../src/knowledge/tools.js';
import { startGateway } from '../../src/servers/gateway/start.js';
import { knowledgeServerFactory } from '../../src/servers/knowledge/server.js';
import { BIN, tack } from '../helpers/cli.js';
import { REPO, tempProject } from '../helpers/project.js';

const OKF = join(REPO, 'test', 'fixtures', 'okf');
const ACME = join(OKF, 'acme_retail');
const SHOP = join(OKF, 'shop');

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function temp(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tack-kb-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A real SQLite database with the shop's orders. */
function shopDatabase(): string {
  const file = join(temp(), 'shop.db');
  const db = new Database(file);
  db.exec(readFileSync(join(OKF, 'shop-data.sql'), 'utf8'));
  db.close();
  return file;
}

const text = (result: unknown) => (result as { content: Array<{ text: string }> }).content[0]!.text;

describe('tack serve-knowledge', () => {
  it('serves search, read and attested runs as tools and every concept as an okf:// resource', async () => {
    const db = shopDatabase();
    const client = new Client({ name: 'other-host', version: '1.0.0' });
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [BIN, 'serve-knowledge', `acme=${ACME}`, SHOP, '--sqlite', db],
        stderr: 'pipe',
      }),
    );
    cleanups.push(() => client.close());
    expect(client.getInstructions()).toMatch(
      /^acme: 9 concepts \(8 human-reviewed, 1 unverified; 1 deprecated\)/m,
    );
    expect(client.getInstructions()).toMatch(/^shop: 9 concepts/m);
    expect(client.getInstructions()).toContain('call run_computation with its parameter values');
    const tools = await client.listTools();
    expect(tools.tools.map((t) => t.name)).toEqual(['search_knowledge', 'read_concept', 'run_computation']);

    const hits = await client.callTool({
      name: 'search_knowledge',
      arguments: { query: 'revenue recognition', k: 10, min_trust: 'human-reviewed' },
    });
    expect(text(hits)).toContain('okf://acme/policies/revenue-recognition');
    expect(text(hits)).not.toContain('unverified');

    const { resources } = await client.listResources();
    expect(resources).toHaveLength(18);
    expect(resources).toContainEqual(
      expect.objectContaining({
        uri: 'okf://acme/metrics/revenue',
        title: 'Revenue',
        mimeType: 'text/markdown',
      }),
    );
    const read = await client.readResource({ uri: 'okf://acme/skills/run-on-bq' });
    const body = (read.contents[0] as { text: string }).text;
    expect(body).toMatch(
      /^Concept: okf:\/\/acme\/skills\/run-on-bq\nTitle: .*\nType: Skill\nTrust: unverified/,
    );
    await expect(client.readResource({ uri: 'okf://acme/skills/nope' })).rejects.toThrow(/no concept/);

    const run = await client.callTool({
      name: 'run_computation',
      arguments: { id: 'okf://shop/computations/revenue-year-sqlite', parameters: { year: 2026 } },
    });
    expect(run.isError).toBeFalsy();
    expect(text(run)).toMatch(/attested:\n {2}revenue = [\d.]+\n {2}orders = \d+\njob sqlite:/);
    const wrongType = await client.callTool({
      name: 'run_computation',
      arguments: { id: 'acme/metrics/revenue', parameters: {} },
    });
    expect(wrongType.isError).toBe(true);
    expect(text(wrongType)).toContain('not an Attested Computation');
    const noRuntime = await client.callTool({
      name: 'run_computation',
      arguments: { id: 'acme/computations/revenue-ytd', parameters: { year: 2026 } },
    });
    expect(noRuntime.isError).toBe(true);
    expect(text(noRuntime)).toContain('no executor for runtime "bigquery"; available runtimes: sqlite');
  });

  it('joins tack serve as the upstream `knowledge` when tack.json lists bundles', async () => {
    using project = tempProject();
    const db = shopDatabase();
    project.write('tack.json', {
      knowledge: { bundles: [ACME, { path: SHOP, name: 'store' }], runtimes: { sqlite: { database: db } } },
    });
    const gateway = await startGateway({ config: project.load(), http: { host: '127.0.0.1', port: 0 } });
    cleanups.push(() => gateway.close());
    expect(gateway.host.servers().map((s) => [s.name, s.status])).toEqual([['knowledge', 'connected']]);
    const client = new Client({ name: 'other-host', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(gateway.url!)));
    cleanups.push(() => client.close());
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'knowledge__search_knowledge',
        'knowledge__read_concept',
        'knowledge__run_computation',
      ]),
    );
    const read = await client.callTool({
      name: 'knowledge__read_concept',
      arguments: { id: 'store/computations/revenue-year-sqlite' },
    });
    expect(text(read)).toContain('Computation: runtime sqlite; parameters year: integer');
  });
});

describe('okf:// resources', () => {
  it('names concepts whose ids or bundle names hold spaces, unicode, ? or % so that a client can read them back', async () => {
    const root = join(temp(), 'my kb');
    const files: Record<string, string> = {
      'my folder/a concept.md': 'spaces',
      'café.md': 'unicode',
      'q?x.md': 'question mark',
      'percent%20.md': 'a literal percent',
    };
    for (const [path, body] of Object.entries(files)) {
      const file = join(root, path);
      mkdirSync(join(file, '..'), { recursive: true });
      writeFileSync(file, `---\ntype: Note\ntitle: ${body}\n---\n${body}\n`);
    }
    const base = new KnowledgeBase([await loadBundle(root)]);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await knowledgeServerFactory(base, knowledgeTools(base))().connect(serverSide);
    const client = new Client({ name: 'other-host', version: '1.0.0' });
    await client.connect(clientSide);
    cleanups.push(() => client.close());

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri).sort()).toEqual([
      'okf://my%20kb/caf%C3%A9',
      'okf://my%20kb/my%20folder/a%20concept',
      'okf://my%20kb/percent%2520',
      'okf://my%20kb/q%3Fx',
    ]);
    for (const { uri, title } of resources) {
      const read = await client.readResource({ uri });
      expect((read.contents[0] as { text: string }).text, uri).toContain(`\n---\n${title}\n`);
    }
    // The model may write an id raw or %-encoded; both name the concept.
    for (const id of ['okf://my kb/my folder/a concept', 'my%20kb/caf%C3%A9', 'café', 'percent%20']) {
      const read = await client.callTool({ name: 'read_concept', arguments: { id } });
      expect(read.isError, id).toBeFalsy();
    }
    const missing = await client.callTool({ name: 'read_concept', arguments: { id: 'okf://my%20kb/nope' } });
    expect(text(missing)).toContain('bundle my kb has no concept "nope"');
  });
});

describe('tack knowledge', () => {
  it('lint exits 0 on a conformant bundle and 1 with every error named, --json included', async () => {
    // A tack home of its own: the user's is shared by every worker and every run.
    const env = { ...process.env, TACK_HOME: join(temp(), 'home') };
    const ok = await tack(['knowledge', 'lint', ACME], { cwd: REPO, env });
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain('log.md:1: warning log-front-matter');
    expect(ok.stdout).toMatch(/conformant: acme_retail: 9 concepts .*; 0 errors, 6 warnings/);

    const broken = join(temp(), 'kb');
    cpSync(SHOP, broken, { recursive: true });
    writeFileSync(join(broken, 'tables', 'untyped.md'), '---\ntitle: Untyped\n---\nbody\n');
    const bad = await tack(['knowledge', 'lint', broken, '--json'], { cwd: REPO, env });
    expect(bad.code).toBe(1);
    const [report] = JSON.parse(bad.stdout) as Array<{
      conformant: boolean;
      issues: Array<{ code: string; file: string }>;
    }>;
    expect(report!.conformant).toBe(false);
    expect(report!.issues).toContainEqual(
      expect.objectContaining({
        severity: 'error',
        code: 'type-missing',
        file: 'tables/untyped.md',
        line: 1,
      }),
    );
  });

  it('run prints an attested value, withholds a refused one in every output, and keeps error hints', async () => {
    const db = shopDatabase();
    const kb = join(temp(), 'shop');
    cpSync(SHOP, kb, { recursive: true });
    const ok = await tack(
      ['knowledge', 'run', 'computations/revenue-year-sqlite', '-b', kb, '-p', 'year=2026', '--sqlite', db],
      { cwd: REPO },
    );
    expect(ok.code).toBe(0);
    const value = /revenue = ([\d.]+)/.exec(ok.stdout)?.[1];
    expect(value).toBeDefined();

    // A contract that asks for a receipt field the executor does not return: every run is refused.
    const file = join(kb, 'computations', 'revenue-year-sqlite.md');
    writeFileSync(
      file,
      readFileSync(file, 'utf8').replace(
        'receipt: [job_id, executed_sql, result]',
        'receipt: [job_id, compiled_sql]',
      ),
    );
    for (const json of [false, true]) {
      const refusedRun = await tack(
        [
          'knowledge',
          'run',
          'computations/revenue-year-sqlite',
          '-b',
          kb,
          '-p',
          'year=2026',
          '--sqlite',
          db,
        ].concat(json ? ['--json'] : []),
        { cwd: REPO },
      );
      expect(refusedRun.code).toBe(1);
      expect(refusedRun.stdout + refusedRun.stderr).not.toContain(value!);
      expect(refusedRun.stdout).toContain('compiled_sql');
      if (json) {
        const shown = JSON.parse(refusedRun.stdout) as Record<string, unknown>;
        expect(shown.status).toBe('refused');
        expect(Object.keys(shown).sort()).toEqual(['attester', 'concept', 'reason', 'status', 'verdict']);
      }
    }

    const bad = await tack(
      ['knowledge', 'run', 'computations/revenue-year-sqlite', '-b', kb, '-p', 'year=next', '--sqlite', db],
      { cwd: REPO },
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(
      /^error: parameter "year" must be an integer.*\nhint: Pass -p year=2026 \(integer\)\./,
    );
  });

  it('without a bundle says how to name one', async () => {
    using project = tempProject();
    const run = await tack(['knowledge', 'search', 'revenue'], { cwd: project.dir, env: project.env });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain('no knowledge bundle given');
    expect(run.stderr).toContain('"knowledge": { "bundles"');
  });

  it('verify records a human review, and show and search read the configured bundles', async () => {
    using project = tempProject();
    const kb = join(project.dir, 'kb');
    cpSync(ACME, kb, { recursive: true });
    project.write('tack.json', { knowledge: { bundles: ['./kb'] } });
    const before = readFileSync(join(kb, 'skills', 'run-on-bq.md'), 'utf8');
    const verify = await tack(
      ['knowledge', 'verify', 'skills/run-on-bq', '--by', 'human:kim', '--at', '2026-11-30T10:00:00Z'],
      { cwd: project.dir, env: project.env },
    );
    expect(verify.stderr).toBe('');
    expect(verify.stdout).toContain('kb/skills/run-on-bq: verified by human:kim; trust now human-reviewed');
    const after = readFileSync(join(kb, 'skills', 'run-on-bq.md'), 'utf8');
    expect(after.replace('verified:\n  - { by: human:kim, at: 2026-11-30T10:00:00Z }\n', '')).toBe(before);
    const show = await tack(['knowledge', 'show', 'skills/run-on-bq'], {
      cwd: project.dir,
      env: project.env,
    });
    expect(show.stdout).toContain(
      'Trust: human-reviewed (verified by human:kim, latest 2026-11-30T10:00:00Z (datetime))',
    );
    const search = await tack(['knowledge', 'search', 'bigquery executor', '--json', '-k', '1'], {
      cwd: project.dir,
      env: project.env,
    });
    expect(JSON.parse(search.stdout)).toEqual([
      expect.objectContaining({ uri: 'okf://kb/skills/run-on-bq', trust: 'human-reviewed' }),
    ]);
  });
});
