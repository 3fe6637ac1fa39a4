import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import pg from 'pg';
import { onFreePort, type Service, startService } from './processes.js';

export interface Postgres {
  /** `postgresql://tack@127.0.0.1:<port>/<database>`; trust authentication on loopback only. */
  connectionString: string;
  port: number;
  /** Stops the server at once (`pg_ctl stop -m immediate`: connections cut, as a crash), keeping its data. */
  halt(): Promise<void>;
  /** Starts the halted server again on the same port and data. */
  resume(): Promise<void>;
  stop(): Promise<void>;
}

const INSTALL_HINT =
  'PostgreSQL server binaries (initdb, pg_ctl, postgres) were not found on PATH or in /usr/lib/postgresql/*/bin: ' +
  'install them with `apt-get install postgresql` (.ci/run does so on CI)';

/**
 * The folder holding initdb, pg_ctl and postgres: PATH first, then Debian's versioned folders, newest version
 * first (Debian keeps the server binaries off PATH).
 */
export function postgresBinDir(): string {
  const has = (dir: string) => ['initdb', 'pg_ctl', 'postgres'].every((b) => existsSync(join(dir, b)));
  for (const dir of (process.env.PATH ?? '').split(delimiter)) if (dir && has(dir)) return dir;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => /^\d+(\.\d+)?$/.test(v))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  for (const v of versions) if (has(join(base, v, 'bin'))) return join(base, v, 'bin');
  // Failing, not skipping: a suite that silently skips its database half reports green for nothing.
  throw new Error(INSTALL_HINT);
}

/**
 * Starts a real, throwaway PostgreSQL server on a free loopback port with its own data folder, and creates
 * `database`. PostgreSQL refuses to run as root, so under root (CI) every server command runs as the `postgres`
 * OS user via runuser, and the folder is handed to that user.
 */
export async function startPostgres(
  database = 'shop',
  options: {
    /**
     * Keep commits across halt() (`synchronous_commit=on`): without it a server stopped with `-m immediate` loses
     * the last transactions it reported committed, which a test counting rows across an outage must not confuse
     * with tack losing them. The disk is still never synced: the machine does not crash, only the server stops.
     */
    durableCommits?: boolean;
  } = {},
): Promise<Postgres> {
  const bin = postgresBinDir();
  const root = mkdtempSync(join(tmpdir(), 'tack-pg-'));
  const data = join(root, 'data');
  const asRoot = process.getuid?.() === 0;
  const command = (tool: string, args: string[]): [string, string[]] =>
    asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, tool), ...args]] : [join(bin, tool), args];
  let service: Service | undefined;
  try {
    if (asRoot) {
      const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      const gid = Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim());
      if (!Number.isInteger(uid) || uid <= 0)
        throw new Error('running as root, but there is no `postgres` OS user to run the server as');
      chownSync(root, uid, gid);
    }
    const [initCmd, initArgs] = command('initdb', [
      '-D',
      data,
      '-A',
      'trust',
      '-U',
      'tack',
      '-E',
      'UTF8',
      '--locale=C',
      '--no-sync',
    ]);
    // The cwd matters under runuser: the postgres user may not be allowed into the caller's folder.
    const init = spawnSync(initCmd, initArgs, { cwd: root, encoding: 'utf8' });
    if (init.status !== 0)
      throw new Error(`initdb failed (${init.status ?? init.signal}):\n${init.stdout}\n${init.stderr}`);

    const serverCommand = (port: number) =>
      command('postgres', [
        '-D',
        data,
        '-p',
        String(port),
        '-k',
        root,
        '-c',
        'listen_addresses=127.0.0.1',
        // A throwaway server: durability buys nothing and costs seconds.
        '-c',
        'fsync=off',
        '-c',
        'full_page_writes=off',
        '-c',
        `synchronous_commit=${options.durableCommits ? 'on' : 'off'}`,
      ]);
    const startServer = (port: number) =>
      startService(...serverCommand(port), {
        ready: /ready to accept connections/,
        timeoutMs: 20_000,
      });
    // Another port when the one found free was bound by a parallel test file first ("could not bind").
    let port = 0;
    service = await onFreePort((free) => {
      port = free;
      return startServer(free);
    });

    const admin = new pg.Client({ host: '127.0.0.1', port, user: 'tack', database: 'postgres' });
    await admin.connect();
    try {
      await admin.query(`CREATE DATABASE ${pg.escapeIdentifier(database)}`);
    } finally {
      await admin.end();
    }
    let running = service;
    const pgStop = (mode: 'fast' | 'immediate') => {
      const [stopCmd, stopArgs] = command('pg_ctl', ['-D', data, 'stop', '-m', mode, '-w']);
      spawnSync(stopCmd, stopArgs, { cwd: root, encoding: 'utf8' });
    };
    return {
      connectionString: `postgresql://tack@127.0.0.1:${port}/${encodeURIComponent(database)}`,
      port,
      async halt() {
        pgStop('immediate');
        await running.stop();
      },
      async resume() {
        running = await startServer(port);
      },
      async stop() {
        // Fast shutdown ends open sessions; SIGTERM (smart) would wait for every client to leave.
        pgStop('fast');
        await running.stop();
        rmSync(root, { recursive: true, force: true });
      },
    };
  } catch (error) {
    await service?.stop();
    rmSync(root, { recursive: true, force: true });
    throw error;
  }
}
