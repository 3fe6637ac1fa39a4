import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { eraCacheKey } from '../../src/mcp/connection.js';
import { openDatabase } from '../../src/store/database.js';
import { SqliteEraCache } from '../../src/store/era-cache.js';
import { readPids } from '../helpers/processes.js';
import { fixtureEntry, startHost, tempProject } from '../helpers/project.js';

function spawnCount(file: string): number {
  return readPids(file).length;
}

describe('the era cache', () => {
  it('makes a warm start spawn one process per stdio server instead of two', async () => {
    using project = tempProject();
    const pids = join(project.dir, 'pids');
    const servers = { s: fixtureEntry('stdio-server.js', ['--pid-file', pids]) };

    const cold = await startHost(project, servers);
    expect(cold.servers()[0]).toMatchObject({ status: 'connected', era: 'modern', eraSource: 'probe' });
    await cold.close();
    const coldStoredAt = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 5));
    // The SDK's 'auto' mode probes on a short-lived sibling process, then starts the real one.
    expect(spawnCount(pids)).toBe(2);

    writeFileSync(pids, '');
    const warm = await startHost(project, servers);
    expect(warm.servers()[0]).toMatchObject({ status: 'connected', era: 'modern', eraSource: 'cache' });
    expect((await warm.callTool('mcp__s__era', {})).content).toEqual([{ type: 'text', text: 'modern' }]);
    await warm.close();
    expect(spawnCount(pids)).toBe(1);

    // A modern verdict that worked is dated again, so a server in daily use is never re-probed.
    const db = openDatabase(join(project.home, 'state', 'tack.db'));
    const key = eraCacheKey(project.config(servers).servers[0]!);
    const stored = await new SqliteEraCache(db).get(key);
    db.close();
    expect(stored?.prior.kind).toBe('modern');
    expect(stored!.storedAt).toBeGreaterThan(coldStoredAt);
  });

  it('remembers legacy servers too, and re-probes when a cached verdict no longer holds', async () => {
    using project = tempProject();
    const legacy = { s: fixtureEntry('legacy-stdio-server.js') };
    const first = await startHost(project, legacy);
    expect(first.servers()[0]).toMatchObject({ era: 'legacy', eraSource: 'probe' });
    await first.close();
    const second = await startHost(project, legacy);
    expect(second.servers()[0]).toMatchObject({ era: 'legacy', eraSource: 'cache' });
    await second.close();

    // A cached modern verdict for a server that is now legacy-only fails at the first request (a stale
    // legacy verdict cannot be caught that way, hence its shorter horizon): tack must re-probe and go on.
    const wrapper = join(project.dir, 'server.mjs');
    writeFileSync(wrapper, `await import(${JSON.stringify(fixtureEntry('stdio-server.js').args[0])});\n`);
    const viaWrapper = { s: { command: process.execPath, args: [wrapper] } };
    const b = await startHost(project, viaWrapper);
    expect(b.servers()[0]).toMatchObject({ era: 'modern', eraSource: 'probe' });
    await b.close();
    writeFileSync(
      wrapper,
      `await import(${JSON.stringify(fixtureEntry('legacy-stdio-server.js').args[0])});\n`,
    );
    const c = await startHost(project, viaWrapper);
    expect(c.servers()[0]?.error?.message ?? 'ok').toBe('ok');
    expect(c.servers()[0]).toMatchObject({ status: 'connected', era: 'legacy', eraSource: 'probe' });
    expect((await c.callTool('mcp__s__era', {})).content).toEqual([{ type: 'text', text: 'legacy' }]);
    await c.close();
    expect(readFileSync(c.servers()[0]!.logFile!, 'utf8')).toMatch(
      /connect with the cached modern era failed/,
    );
  });
});
