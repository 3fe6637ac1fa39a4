import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import pg from 'pg';
import { startPostgres } from '../test/helpers/postgres.js';
import { startTeam, type Team } from '../test/helpers/team.js';
import { fixtures, isMain, log, median, p50p99, round, tempDir } from './util.js';

/**
 * issue 22's benchmark: one, two and three `tack serve --http` instances on one PostgreSQL store behind nginx
 * running docs/deploy.md's configuration (test/helpers/team.ts), each with its own stdio upstream, against one
 * instance answered directly (no balancer: what a single-machine user runs). 32 clients in this
 * process (keep-alive connections, each sending its next call when the last one is answered) replay a recorded 2026-07-28 `tools/call` of a 10 ms tool (the fixture's `slow`, one step of 10 ms) for a
 * fixed number of calls, so every call is answered before the audit log is counted: rows written vs calls made.
 * Setups are interleaved, in a rotating order per round. CPU comes from /proc: each instance with the upstream it
 * started, nginx, PostgreSQL (every process of its server), this process (the load), and the machine as a whole.
 */

export interface TeamBenchOptions {
  /** Calls per setup and round (default 6000). */
  calls?: number;
  rounds?: number;
  connections?: number;
}

const USER_HZ_MS = 10;

function cpuMs(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) * USER_HZ_MS;
  } catch {
    return 0;
  }
}

function descendants(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    let children: string[] = [];
    try {
      children = readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(/\s+/).filter(Boolean);
    } catch {
      return;
    }
    for (const child of children) {
      out.push(Number(child));
      visit(Number(child));
    }
  };
  visit(pid);
  return out;
}

/** Every process whose command is `comm` (PostgreSQL's backends are not children of anything we started). */
function processesNamed(comm: string): number[] {
  const out: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) out.push(Number(entry));
    } catch {}
  }
  return out;
}

/** Busy and total jiffies of the whole machine (/proc/stat's first line). */
function machineTicks(): { busy: number; total: number } {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
  const total = fields.reduce((a, b) => a + b, 0);
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  return { busy: total - idle, total };
}

interface Setup {
  name: string;
  /** Where the load goes: nginx, or the one instance directly. */
  url: string;
  team: Team;
  /** The tack processes this setup uses. */
  instances: Team['instances'];
}

interface Run {
  calls: number;
  seconds: number;
  callsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  non2xx: number;
  auditRows: number;
  /** CPU ms per call: each instance (tack + its upstream), nginx, PostgreSQL, the load generator. */
  cpuMsPerCall: { instances: number[]; nginx: number; postgres: number; load: number };
  /** Share of the machine's two cores busy during the run. */
  machineBusy: number;
}

/** Records the POST of one 2026-07-28 `tools/call slow` by an SDK client named `name`, for the clients to replay. */
async function recordCall(url: string, name: string) {
  let recorded: { headers: Record<string, string>; body: string } | undefined;
  const client = new Client({ name, version: '1.0.0' }, { versionNegotiation: { mode: 'auto' } });
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      fetch: async (input, init) => {
        if (typeof init?.body === 'string' && init.body.includes('"tools/call"'))
          recorded = { headers: Object.fromEntries(new Headers(init.headers)), body: init.body };
        return fetch(input, init);
      },
    }),
  );
  const result = await client.callTool({ name: 'fx__slow', arguments: { steps: 1, delayMs: 10 } });
  await client.close();
  if (result.isError || !recorded) throw new Error(`${url}: ${JSON.stringify(result)}`);
  return recorded;
}

/**
 * `connections` clients, each on its own keep-alive connection, sending the recorded call again as soon as the last
 * one is answered, until `calls` were sent: exact counts and timing (autocannon's `amount` ends on its one-second
 * tick, which made a run's duration whole seconds).
 */
async function replay(
  url: string,
  recorded: { headers: Record<string, string>; body: string },
  calls: number,
  connections: number,
): Promise<{ ok: number; errors: number; non2xx: number; latencies: number[] }> {
  const agent = new Agent({ keepAlive: true, maxSockets: connections });
  const out = { ok: 0, errors: 0, non2xx: 0, latencies: [] as number[] };
  let sent = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const began = performance.now();
      const req = request(url, { method: 'POST', agent, headers: recorded.headers }, (res) => {
        res.resume();
        res.on('end', () => {
          out.latencies.push(performance.now() - began);
          if (res.statusCode === 200) out.ok++;
          else out.non2xx++;
          resolve();
        });
        res.on('error', () => {
          out.errors++;
          resolve();
        });
      });
      req.on('error', () => {
        out.errors++;
        resolve();
      });
      req.end(recorded.body);
    });
  await Promise.all(
    Array.from({ length: connections }, async () => {
      while (sent < calls) {
        sent++;
        await one();
      }
    }),
  );
  agent.destroy();
  return out;
}

async function load(
  setup: Setup,
  db: pg.Client,
  calls: number,
  connections: number,
  label: string,
): Promise<Run> {
  // A client name per run, so the audit rows of this run alone are counted.
  const recorded = await recordCall(setup.url, label);
  const before = await auditRows(db, label);
  const pids = setup.instances.map((i) => i.process.pid!);
  const instanceCpu = () =>
    pids.map((pid) => cpuMs(pid) + descendants(pid).reduce((s, p) => s + cpuMs(p), 0));
  const nginxPids = [setup.team.nginx.pid!, ...descendants(setup.team.nginx.pid!)];
  const nginxCpu = () => nginxPids.reduce((s, p) => s + cpuMs(p), 0);
  const postgresCpu = () => processesNamed('postgres').reduce((s, p) => s + cpuMs(p), 0);
  const start = {
    instances: instanceCpu(),
    nginx: nginxCpu(),
    postgres: postgresCpu(),
    load: process.cpuUsage(),
    machine: machineTicks(),
  };
  const started = performance.now();
  const result = await replay(setup.url, recorded, calls, connections);
  const seconds = (performance.now() - started) / 1000;
  const loadCpu = process.cpuUsage(start.load);
  const machine = machineTicks();
  const answered = result.ok;
  const perCall = (ms: number) => round(ms / Math.max(1, answered), 3);
  // `before` already counts the recorded call's own row: what follows is the load's.
  const rows = (await auditRows(db, label)) - before;
  return {
    calls: answered,
    seconds: round(seconds, 2),
    callsPerSecond: round(answered / seconds),
    ...p50p99(
      result.latencies.sort((a, b) => a - b),
      2,
    ),
    errors: result.errors,
    non2xx: result.non2xx,
    auditRows: rows,
    cpuMsPerCall: {
      instances: instanceCpu().map((ms, i) => perCall(ms - start.instances[i]!)),
      nginx: perCall(nginxCpu() - start.nginx),
      postgres: perCall(postgresCpu() - start.postgres),
      load: perCall((loadCpu.user + loadCpu.system) / 1000),
    },
    machineBusy: round(
      (machine.busy - start.machine.busy) / Math.max(1, machine.total - start.machine.total),
      3,
    ),
  };
}

async function auditRows(db: pg.Client, client: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(
    "SELECT count(*) AS n FROM audit WHERE client LIKE $1 || '@%' AND tool = 'slow'",
    [client],
  );
  return Number(rows[0]!.n);
}

export async function runTeam(options: TeamBenchOptions = {}) {
  const calls = options.calls ?? 6000;
  const rounds = options.rounds ?? 3;
  const connections = options.connections ?? 32;
  const tmp = tempDir('team');
  const postgres = await startPostgres('tack_bench');
  const teams: Team[] = [];
  const db = new pg.Client({ connectionString: postgres.connectionString });
  try {
    const configFile = join(tmp.dir, 'serve.json');
    writeFileSync(
      configFile,
      JSON.stringify({ mcpServers: { fx: { command: process.execPath, args: [fixtures.dual] } } }),
    );
    const env = { ...process.env, TACK_HOME: join(tmp.dir, 'home') };
    for (const count of [1, 2, 3]) {
      log(`team: starting ${count} instance(s) behind nginx`);
      teams.push(
        await startTeam({ count, cwd: tmp.dir, configFile, storeUrl: postgres.connectionString, env }),
      );
    }
    await db.connect();
    const setups: Setup[] = [
      {
        name: 'direct, 1 instance',
        url: `http://${teams[0]!.instances[0]!.host}/mcp`,
        team: teams[0]!,
        instances: teams[0]!.instances,
      },
      ...teams.map((team, i) => ({
        name: `nginx, ${i + 1} instance${i ? 's' : ''}`,
        url: team.url,
        team,
        instances: team.instances,
      })),
    ];
    for (const setup of setups) await load(setup, db, Math.min(1000, calls), connections, 'warmup');
    const runs = new Map<string, Run[]>(setups.map((s) => [s.name, []]));
    for (let r = 0; r < rounds; r++) {
      const order = setups.map((_, i) => setups[(i + r) % setups.length]!);
      for (const setup of order) {
        log(`team: round ${r + 1}/${rounds}, ${setup.name}`);
        runs
          .get(setup.name)!
          .push(await load(setup, db, calls, connections, `team-r${r}-${setups.indexOf(setup)}`));
      }
    }
    const table = Object.fromEntries(
      [...runs].map(([name, list]) => {
        const sum = (f: (run: Run) => number) => list.reduce((n, run) => n + f(run), 0);
        const perCall = list.map((run) => run.cpuMsPerCall);
        return [
          name,
          {
            callsPerSecond: median(list.map((run) => run.callsPerSecond)),
            perRoundCallsPerSecond: list.map((run) => run.callsPerSecond),
            p50Ms: median(list.map((run) => run.p50Ms)),
            p99Ms: median(list.map((run) => run.p99Ms)),
            calls: sum((run) => run.calls),
            errors: sum((run) => run.errors),
            non2xx: sum((run) => run.non2xx),
            auditRows: sum((run) => run.auditRows),
            lostAuditRows: sum((run) => run.calls) - sum((run) => run.auditRows),
            cpuMsPerCall: {
              instances: perCall[0]!.instances.map((_, i) => median(perCall.map((c) => c.instances[i]!))),
              nginx: median(perCall.map((c) => c.nginx)),
              postgres: median(perCall.map((c) => c.postgres)),
              load: median(perCall.map((c) => c.load)),
            },
            machineBusy: median(list.map((run) => run.machineBusy)),
          },
        ];
      }),
    );
    // With a core per instance, an instance's throughput is bounded by 1000 ms over its CPU per call; the balancer,
    // the database and the clients would need cores of their own (here they share the same two).
    const one = table['nginx, 1 instance'] as { cpuMsPerCall: { instances: number[] } };
    const perInstanceBound = round(1000 / (one.cpuMsPerCall.instances[0] ?? 1));
    return {
      description:
        `1-3 tack serve --http processes on one PostgreSQL store behind nginx (docs/deploy.md's configuration), each ` +
        `with its own stdio fixture, and 1 instance direct; ${connections} keep-alive clients in the bench process ` +
        `replaying a 2026-07-28 tools/call of a 10 ms tool, ${calls} calls per setup and round, ${rounds} rounds in a ` +
        'rotating order after a 1,000-call warm-up; audit rows counted in PostgreSQL per run; CPU from /proc',
      machine: `${cpus().length} cores`,
      calls,
      rounds,
      connections,
      setups: table,
      projection: {
        callsPerSecondPerInstanceCore: perInstanceBound,
        note: 'with a core per instance (and nginx, PostgreSQL and the clients elsewhere), N instances would serve about N x this, until the 10 ms tool bounds 32 connections at about 3,000 calls/s',
      },
    };
  } finally {
    await db.end().catch(() => {});
    for (const team of teams) await team.stop();
    await postgres.stop();
    tmp.remove();
  }
}

if (isMain(import.meta.url)) {
  process.stdout.write(
    `${JSON.stringify(
      await runTeam({
        calls: Number(process.env.CALLS ?? 6000),
        rounds: Number(process.env.ROUNDS ?? 3),
      }),
      null,
      2,
    )}\n`,
  );
}
