import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RunningGateway, startGateway } from '../../src/servers/gateway/start.js';
import { type Postgres, startPostgres } from '../helpers/postgres.js';
import { fixtureEntry, type TempProject, tempProject } from '../helpers/project.js';

/**
 * Two `tack serve --http` instances sharing one PostgreSQL store, as behind a load balancer: health and readiness
 * for the balancer, one audit log written by both, and a drain that lets a call in flight finish.
 */
describe('tack serve for a team: instances sharing a PostgreSQL store', () => {
  let postgres: Postgres;
  let project: TempProject;
  const instances: RunningGateway[] = [];

  beforeAll(async () => {
    postgres = await startPostgres('tack_team');
    project = tempProject();
    project.write('tack.json', {
      // A project file may not choose the store: the URL comes from TACK_STORE_URL below.
      mcpServers: { fx: fixtureEntry('stdio-server.js') },
    });
    project.env.TACK_STORE_URL = postgres.connectionString;
    for (let i = 0; i < 2; i++)
      instances.push(await startGateway({ config: project.load(), http: { port: 0 } }));
  }, 90_000);

  afterAll(async () => {
    for (const instance of instances) await instance.close().catch(() => {});
    project?.[Symbol.dispose]();
    await postgres?.stop();
  });

  const base = (i: number) => instances[i]!.url!.replace(/\/mcp$/, '');
  const get = async (i: number, path: string) => {
    const response = await fetch(`${base(i)}${path}`);
    return { status: response.status, text: (await response.text()).trim() };
  };
  async function client(i: number) {
    const c = new Client({ name: `team-${i}`, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
    await c.connect(new StreamableHTTPClientTransport(new URL(instances[i]!.url!)));
    return c;
  }

  it('each instance uses the PostgreSQL store and answers /healthz and /readyz', async () => {
    for (const [i, instance] of instances.entries()) {
      expect(instance.host.store?.engine).toBe('postgres');
      expect(await get(i, '/healthz')).toEqual({ status: 200, text: 'ok' });
      expect(await get(i, '/readyz')).toEqual({ status: 200, text: 'ready' });
    }
  });

  it('calls through either instance land once each in the one audit log', async () => {
    const clients = await Promise.all([client(0), client(1)]);
    try {
      const marks = Array.from({ length: 10 }, (_, n) => `team-call-${n}`);
      await Promise.all(
        marks.map((text, n) => clients[n % 2]!.callTool({ name: 'fx__echo', arguments: { text } })),
      );
      // Read through the other instance's store: the rows were written before the answers went out.
      const rows = (await instances[1]!.host.store!.audit.recent(100)).filter((e) => e.tool === 'echo');
      expect(rows).toHaveLength(10);
      expect(new Set(rows.map((e) => e.client))).toEqual(
        new Set(['team-0@1.0.0 (http, modern)', 'team-1@1.0.0 (http, modern)']),
      );
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  });

  it('drains on shutdown: not ready any more, the call in flight finishes, new connections are refused', async () => {
    const c = await client(0);
    let progressed = false;
    const slow = c.callTool(
      { name: 'fx__slow', arguments: { steps: 4, delayMs: 250 } },
      { onprogress: () => (progressed = true) },
    );
    // The call is under way upstream before the drain starts: its first progress came back (a fixed pause was
    // not always long enough on a loaded machine).
    await expect.poll(() => progressed).toBe(true);
    const drained = instances[0]!.drain(10_000);
    expect(await get(0, '/readyz').catch(() => ({ status: 0, text: 'refused' }))).not.toEqual({
      status: 200,
      text: 'ready',
    });
    const result = await slow;
    expect(result.content).toEqual([{ type: 'text', text: 'done after 4 steps' }]);
    expect(await drained).toEqual({ finished: 1, cut: 0 });
    await expect(fetch(`${base(0)}/healthz`)).rejects.toThrow();
    // The other instance still serves, and the drained one's answered call has its audit row.
    expect(await get(1, '/readyz')).toEqual({ status: 200, text: 'ready' });
    const rows = await instances[1]!.host.store!.audit.recent(100);
    expect(rows.filter((e) => e.tool === 'slow' && e.outcome === 'ok')).toHaveLength(1);
    await c.close().catch(() => {});
  });
});
