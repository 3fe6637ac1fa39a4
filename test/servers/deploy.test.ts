import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { digest } from '../../src/util/canonical-json.js';
import { tack } from '../helpers/cli.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { fixture, fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';
import { hostFetch, startTeam, type Team, tackConfigFromDocs } from '../helpers/team.js';

const TOKEN = 'deploy-test-token';
// docs/deploy.md's configuration allows this Host only; the clients send it, as they would through DNS.
const viaName = {
  fetch: hostFetch('tack.internal'),
  requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
};

type CallResult = Awaited<ReturnType<Client['callTool']>>;

const text = (result: CallResult): string =>
  ((result.content ?? []) as Array<{ text?: string }>).map((b) => b.text ?? '').join('\n');
const instanceOf = (result: CallResult): string =>
  (result.structuredContent as { env: Record<string, string> }).env.TACK_INSTANCE ?? '?';

async function connect(url: string, name: string, era: 'modern' | 'legacy'): Promise<Client> {
  const client = new Client(
    { name, version: '1.0.0' },
    era === 'modern' ? { versionNegotiation: { mode: 'auto' } } : {},
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url), viaName));
  expect(client.getProtocolEra()).toBe(era);
  return client;
}

/**
 * docs/deploy.md as a team would run it: PostgreSQL, three separate `tack serve --http` processes (each with its
 * own stdio upstreams) and nginx (Debian's package; .ci/run installs it) running the page's configuration, driven
 * by 2026-07-28 and 2025-era clients.
 */
describe('three tack serve processes behind nginx, on one PostgreSQL store (docs/deploy.md)', () => {
  let postgres: Postgres;
  let project: TempProject;
  let team: Team;
  let configFile: string;
  const open: Client[] = [];

  beforeAll(async () => {
    postgres = await startPostgres('tack_deploy');
    project = tempProject('tack-deploy-');
    // The page's tack configuration (store, token, allowed hosts, drain), pointed at this database.
    configFile = project.write('serve.json', {
      ...tackConfigFromDocs(postgres.connectionString),
      mcpServers: {
        // Each instance's upstream reports which instance it belongs to.
        fx: fixtureEntry('stdio-server.js', [], { env: { TACK_INSTANCE: '${TACK_INSTANCE:-cli}' } }),
        rug: { command: process.execPath, args: [fixture('attack-server.js'), '--role', 'rugpull'] },
      },
    });
    team = await startTeam({
      count: 3,
      cwd: project.dir,
      configFile,
      // The test's PostgreSQL trusts loopback connections: the password is there because the page's URL has one.
      env: { ...project.env, TACK_DB_PASSWORD: 'not-checked', TACK_TOKEN: TOKEN },
    });
  }, 120_000);

  afterAll(async () => {
    await Promise.allSettled(open.map((c) => c.close()));
    await team?.stop();
    project?.[Symbol.dispose]();
    await postgres?.stop();
  });

  async function client(url: string, name: string, era: 'modern' | 'legacy'): Promise<Client> {
    const c = await connect(url, name, era);
    open.push(c);
    return c;
  }
  const direct = (i: number) => `http://${team.instances[i]!.host}/mcp`;

  it('spreads 2026-07-28 calls over all three; a 2025-era session stays on the instance its id names', async () => {
    // The page's token is required through the balancer.
    const anonymous = new Client(
      { name: 'anonymous', version: '1.0.0' },
      { versionNegotiation: { mode: 'auto' } },
    );
    await expect(
      anonymous.connect(
        new StreamableHTTPClientTransport(new URL(team.url), { fetch: hostFetch('tack.internal') }),
      ),
    ).rejects.toThrow(/401|unauthorized/i);
    // A name the page does not allow is refused as DNS rebinding would be, token or not.
    const rebound = await hostFetch('evil.example')(team.url, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${TOKEN}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    expect(rebound.status).toBe(403);
    const modern = await client(team.url, 'spread', 'modern');
    const seen = new Set<string>();
    for (let i = 0; i < 12; i++)
      seen.add(instanceOf(await modern.callTool({ name: 'fx__env', arguments: {} })));
    expect(seen).toEqual(new Set(['a', 'b', 'c']));

    for (let n = 0; n < 3; n++) {
      const transport = new StreamableHTTPClientTransport(new URL(team.url), viaName);
      const legacy = new Client({ name: `legacy-${n}`, version: '1.0.0' });
      open.push(legacy);
      await legacy.connect(transport);
      expect(legacy.getProtocolEra()).toBe('legacy');
      const answered = new Set<string>();
      for (let i = 0; i < 4; i++)
        answered.add(instanceOf(await legacy.callTool({ name: 'fx__env', arguments: {} })));
      expect([...answered]).toEqual([transport.sessionId?.split('.')[0]]);
    }
  });

  it('a rug pull held by every instance is served again by all three after one `tack pins accept`', async () => {
    const clients = await Promise.all([0, 1, 2].map((i) => client(direct(i), `pins-${i}`, 'modern')));
    // Each instance's own upstream turns its description poisoned after its first call.
    for (const c of clients)
      expect(text(await c.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } }))).toBe('3');
    for (const c of clients)
      await expect
        .poll(async () => text(await c.callTool({ name: 'rug__add', arguments: { a: 1, b: 2 } })), {
          timeout: 15_000,
        })
        .toMatch(/rug__add is unavailable: tool add changed since it was approved/);

    // From any machine with the same configuration: the store it names is the instances' store.
    const accept = await tack(['pins', 'accept', 'rug', 'add', '--config', configFile], {
      cwd: project.dir,
      env: { ...project.env, TACK_DB_PASSWORD: 'not-checked', TACK_TOKEN: TOKEN },
    });
    expect(accept.code, accept.stderr).toBe(0);
    // From the next request on, every instance serves it, and so does the balancer in front of them.
    for (const c of clients) {
      const result = await c.callTool({ name: 'rug__add', arguments: { a: 2, b: 2 } });
      expect(text(result)).toBe('4');
    }
    const balanced = await client(team.url, 'pins-lb', 'modern');
    for (let i = 0; i < 6; i++)
      expect(text(await balanced.callTool({ name: 'rug__add', arguments: { a: i, b: 1 } }))).toBe(
        String(i + 1),
      );
  }, 60_000);

  it('an instance killed mid-load fails only its calls in flight; every answered call is audited once', async () => {
    // A 2025-era session on the instance about to die.
    let doomed: { client: Client; transport: StreamableHTTPClientTransport } | undefined;
    for (let n = 0; n < 12 && !doomed; n++) {
      const transport = new StreamableHTTPClientTransport(new URL(team.url), viaName);
      const c = new Client({ name: `doomed-${n}`, version: '1.0.0' });
      open.push(c);
      await c.connect(transport);
      if (transport.sessionId?.startsWith('c.')) doomed = { client: c, transport };
    }
    expect(doomed, 'no 2025-era session landed on instance c').toBeDefined();

    const CLIENTS = 8;
    const answered: string[] = [];
    const failed: Array<{ text: string; error: string }> = [];
    let answeredAfterKill = 0;
    let killed = false;
    let stop = false;
    const loads = await Promise.all(
      Array.from({ length: CLIENTS }, (_, k) => client(team.url, `load-${k}`, 'modern')),
    );
    const loops = loads.map(async (c, k) => {
      for (let i = 0; !stop; i++) {
        // Every attempt, retries included, carries its own text, so its audit row can be told apart.
        const mark = `load-${k}-${i}`;
        try {
          const result = await c.callTool({ name: 'fx__slow', arguments: { steps: 1, delayMs: 10, mark } });
          expect(result.isError, text(result)).toBeFalsy();
          answered.push(mark);
          if (killed) answeredAfterKill++;
        } catch (error) {
          failed.push({ text: mark, error: String(error) });
        }
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const victim = team.instances[2]!;
    const gone = new Promise((resolve) => victim.process.once('exit', resolve));
    victim.process.kill('SIGKILL');
    killed = true;
    await gone;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    stop = true;
    await Promise.all(loops);

    // Only what was in flight on the killed instance failed: at most one call per client.
    expect(failed.length, JSON.stringify(failed)).toBeLessThanOrEqual(CLIENTS);
    for (const f of failed) expect(f.error).toMatch(/502 Bad Gateway/);
    expect(answeredAfterKill).toBeGreaterThan(0);
    expect(answered.length).toBeGreaterThan(20);

    const db = new pg.Client({ connectionString: postgres.connectionString });
    await db.connect();
    const rows = (
      await db.query<{ args_sha256: string; outcome: string }>(
        "SELECT args_sha256, outcome FROM audit WHERE client LIKE 'load-%' AND tool = 'slow'",
      )
    ).rows;
    await db.end();
    const count = new Map<string, number>();
    for (const row of rows) count.set(row.args_sha256, (count.get(row.args_sha256) ?? 0) + 1);
    const sha = (mark: string) => digest({ steps: 1, delayMs: 10, mark });
    // Every answered call has exactly one row; a failed one at most one (its instance may have run it and died
    // before answering); and no row belongs to a call nobody made.
    const missing = answered.filter((m) => count.get(sha(m)) !== 1);
    expect(
      missing,
      `answered calls without exactly one audit row: ${missing.slice(0, 5).join(', ')}`,
    ).toEqual([]);
    for (const f of failed) expect(count.get(sha(f.text)) ?? 0).toBeLessThanOrEqual(1);
    expect(rows.length).toBeGreaterThanOrEqual(answered.length);
    expect(rows.length).toBeLessThanOrEqual(answered.length + failed.length);

    // The dead instance's 2025-era session: another instance answers 404, and a new session works.
    await expect(doomed!.client.callTool({ name: 'fx__env', arguments: {} })).rejects.toThrow(
      /404|not found/i,
    );
    const again = await client(team.url, 'doomed-again', 'legacy');
    expect(['a', 'b']).toContain(instanceOf(await again.callTool({ name: 'fx__env', arguments: {} })));
  }, 90_000);
});
